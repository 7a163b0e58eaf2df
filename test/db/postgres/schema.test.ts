import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { expect, it } from 'vitest';
import * as sqliteSchema from '../../../src/db/schema.js';
import type { Store } from '../../../src/db/store.js';
import type { MirrorDatabase } from '../../../src/db/open.js';
import { describePostgres, storeMaker, storeRows } from '../../helpers/postgres.js';
import { tempDatabase } from '../../helpers/temp-db.js';

interface Column {
  table: string;
  column: string;
  kind: string;
  notNull: boolean;
}

interface Index {
  table: string;
  name: string;
  /** The key columns (or expressions) in order, comma-separated. */
  columns: string;
  unique: boolean;
  /** A partial index's predicate, normalised; null for a whole-table index. */
  where: string | null;
}

// Tables one database forces: PostgreSQL keeps media bytes in the database (its instances share no
// folder), SQLite beside it in files.
const PG_ONLY_TABLES = new Set(['media_blob_chunks']);

// SQLite columns declared `integer({ mode: 'boolean' })` in src/db/schema.ts: stored as 0 or 1,
// the twin of a PostgreSQL boolean; any other INTEGER is PostgreSQL's integer or bigint.
const SQLITE_BOOLEANS = new Set(
  Object.values(sqliteSchema)
    .filter((t) => t instanceof SQLiteTable)
    .flatMap((t) => {
      const { name, columns } = getTableConfig(t);
      return columns.filter((c) => c.columnType === 'SQLiteBoolean').map((c) => `${name}.${c.name}`);
    }),
);

/**
 * A SQLite column's kind: INTEGER holds what PostgreSQL keeps as integer or bigint (64-bit both),
 * or a boolean as 0 and 1; TEXT compares byte by byte (BINARY), BLOB is bytes.
 */
function sqliteKind(table: string, column: string, declared: string): string {
  const type = declared.toLowerCase();
  if (type === 'integer') return SQLITE_BOOLEANS.has(`${table}.${column}`) ? 'boolean' : 'integer';
  return { text: 'text compared bytewise', blob: 'bytes' }[type] ?? `unknown sqlite ${declared}`;
}

/** The same kinds from PostgreSQL's side: every text column must be `COLLATE "C"` to compare as SQLite's. */
function pgKind(dataType: string, collation: unknown): string {
  if (dataType === 'text')
    return collation === 'C' ? 'text compared bytewise' : `text collated ${String(collation)}`;
  return (
    { integer: 'integer', bigint: 'integer', boolean: 'boolean', bytea: 'bytes' }[dataType] ??
    `unknown pg ${dataType}`
  );
}

/** `(status = 'running'::text)` and `status = 'running'` alike: no casts, outer parentheses, quotes or case. */
function predicate(text: string | null | undefined): string | null {
  if (text == null) return null;
  let p = text
    .replace(/::\w+/g, '')
    .replaceAll('"', '')
    .replaceAll('`', '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
  while (p.startsWith('(') && p.endsWith(')')) p = p.slice(1, -1).trim();
  return p;
}

const sortBy = <T>(rows: T[], key: (row: T) => string): T[] =>
  [...rows].sort((a, b) => key(a).localeCompare(key(b)));
const columnKey = (c: Column): string => `${c.table}.${c.column}`;
const indexKey = (i: Index): string => `${i.table}.${i.name}`;

function sqliteColumns(lite: MirrorDatabase): Column[] {
  const rows = lite.sqlite
    .prepare(
      `select m.name as t, p.name as c, p.type as type, p."notnull" as nn, p.pk as pk
         from sqlite_master m join pragma_table_info(m.name) p
        where m.type = 'table' and m.name not like '\\_\\_%' escape '\\' and m.name not like 'sqlite\\_%' escape '\\'`,
    )
    .all() as { t: string; c: string; type: string; nn: number; pk: number }[];
  return rows.map((r) => ({
    table: r.t,
    column: r.c,
    kind: sqliteKind(r.t, r.c, r.type),
    // A SQLite INTEGER PRIMARY KEY is never null whatever its declaration says.
    notNull: r.nn === 1 || (r.pk > 0 && r.type.toLowerCase() === 'integer'),
  }));
}

async function pgColumns(pg: Store): Promise<Column[]> {
  const rows = await storeRows(
    pg,
    `select table_name, column_name, data_type, collation_name, is_nullable from information_schema.columns
      where table_schema = 'public'`,
  );
  return rows
    .filter((r) => !PG_ONLY_TABLES.has(String(r.table_name)))
    .map((r) => ({
      table: String(r.table_name),
      column: String(r.column_name),
      kind: pgKind(String(r.data_type), r.collation_name),
      notNull: r.is_nullable === 'NO',
    }));
}

/** Each table's primary key columns, in key order. */
function sqlitePrimaryKeys(lite: MirrorDatabase): Record<string, string> {
  const rows = lite.sqlite
    .prepare(
      `select m.name as t, p.name as c from sqlite_master m join pragma_table_info(m.name) p
        where m.type = 'table' and p.pk > 0 and m.name not like '\\_\\_%' escape '\\' order by m.name, p.pk`,
    )
    .all() as { t: string; c: string }[];
  const keys: Record<string, string> = {};
  for (const r of rows) keys[r.t] = keys[r.t] === undefined ? r.c : `${keys[r.t]},${r.c}`;
  return keys;
}

/** Every index of a table but its primary key's (SQLite's `pk` autoindex, which the keys compare). */
function sqliteIndexes(lite: MirrorDatabase): Index[] {
  const rows = lite.sqlite
    .prepare(
      `select m.name as t, il.name as n, il."unique" as u, s.sql as sql,
              (select group_concat(name, ',') from (select name from pragma_index_xinfo(il.name) where key = 1 order by seqno)) as cols
         from sqlite_master m join pragma_index_list(m.name) il left join sqlite_master s on s.type = 'index' and s.name = il.name
        where m.type = 'table' and il.origin <> 'pk' and m.name not like '\\_\\_%' escape '\\'`,
    )
    .all() as { t: string; n: string; u: number; sql: string | null; cols: string | null }[];
  return rows.map((r) => ({
    table: r.t,
    name: r.n,
    columns: r.cols ?? '',
    unique: r.u === 1,
    where: predicate(/\bwhere\b(.*)$/is.exec(r.sql ?? '')?.[1]),
  }));
}

const PG_INDEXES = `
  select t.relname as table_name, i.relname as index_name, x.indisunique as is_unique, x.indisprimary as is_primary,
         pg_get_expr(x.indpred, x.indrelid) as predicate,
         (select string_agg(pg_get_indexdef(x.indexrelid, k, true), ',' order by k)
            from generate_series(1, x.indnkeyatts) k) as columns
    from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
    join pg_namespace n on n.oid = t.relnamespace
   where n.nspname = 'public'`;

async function pgIndexes(pg: Store): Promise<{ keys: Record<string, string>; indexes: Index[] }> {
  const rows = (await storeRows(pg, PG_INDEXES)).filter((r) => !PG_ONLY_TABLES.has(String(r.table_name)));
  const keys: Record<string, string> = {};
  const indexes: Index[] = [];
  for (const r of rows) {
    const columns = String(r.columns).replaceAll('"', '');
    if (r.is_primary === 1 || r.is_primary === true) keys[String(r.table_name)] = columns;
    else {
      indexes.push({
        table: String(r.table_name),
        name: String(r.index_name),
        columns,
        unique: r.is_unique === 1 || r.is_unique === true,
        where: predicate(r.predicate as string | null),
      });
    }
  }
  return { keys, indexes };
}

/**
 * Where the two schemas' indexes differ on purpose, each as PostgreSQL has it and as SQLite has it:
 * the comparison reads PostgreSQL's through this table, so a change to either side still shows.
 */
const PG_INDEX_AS_SQLITE: Record<string, { pg: string; sqlite: string }> = {
  // A b-tree entry holds at most about a third of a page and an OPTIONS body is often longer: the
  // uniqueness is on its md5, which is what SQLite's unique index on the whole text guarantees.
  options_bodies_body_unique: { pg: 'md5(body)', sqlite: 'body' },
  // SQLite ends every index entry with the rowid, the change id: PostgreSQL has to name it.
  changes_run_idx: { pg: 'run_id,id', sqlite: 'run_id' },
};

function asSqlite(index: Index): Index {
  const difference = PG_INDEX_AS_SQLITE[index.name];
  return difference !== undefined && index.columns === difference.pg
    ? { ...index, columns: difference.sqlite }
    : index;
}

describePostgres('the PostgreSQL schema, migrated', () => {
  const makePg = storeMaker('postgres');

  it('has the tables, columns, kinds and nullability the migrated SQLite schema has', async () => {
    const pg = await makePg();
    const lite = tempDatabase();
    expect(sortBy(await pgColumns(pg), columnKey)).toEqual(sortBy(sqliteColumns(lite), columnKey));
  });

  it('has the primary keys and indexes (name, columns, uniqueness, predicate) the migrated SQLite schema has', async () => {
    const pg = await makePg();
    const lite = tempDatabase();
    const fromPg = await pgIndexes(pg);
    expect(fromPg.keys).toEqual(sqlitePrimaryKeys(lite));
    expect(sortBy(fromPg.indexes.map(asSqlite), indexKey)).toEqual(sortBy(sqliteIndexes(lite), indexKey));
  });
});
