import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as pgSchema from '../../../src/db/postgres/schema.js';
import type * as sqliteSchema from '../../../src/db/schema.js';
import { describePostgres, storeMaker, storeRows } from '../../helpers/postgres.js';
import { tempDatabase } from '../../helpers/temp-db.js';

interface Column {
  table: string;
  column: string;
  type: string;
  notNull: boolean;
}

interface Index {
  table: string;
  columns: string;
  unique: boolean;
}

// The kinds of value a column holds, whatever each database calls them: SQLite's INTEGER holds
// what PostgreSQL keeps as integer or bigint; a boolean is SQLite's 0 or 1.
const PG_KIND: Record<string, string> = {
  integer: 'integer',
  bigint: 'integer',
  boolean: 'integer',
  text: 'text',
  bytea: 'blob',
  'double precision': 'real',
};
const SQLITE_KIND: Record<string, string> = { integer: 'integer', text: 'text', blob: 'blob', real: 'real' };

const byKey = <T extends { table: string }>(rows: T[], key: (row: T) => string): T[] =>
  [...rows].sort((a, b) => key(a).localeCompare(key(b)));

function pgColumns(rows: Record<string, unknown>[]): Column[] {
  return rows.map((r) => ({
    table: String(r.table_name),
    column: String(r.column_name),
    type: PG_KIND[String(r.data_type)] ?? `unknown ${String(r.data_type)}`,
    notNull: r.is_nullable === 'NO',
  }));
}

/** `CREATE [UNIQUE] INDEX name ON public.t USING btree (a, b) [WHERE …]` → its columns and uniqueness. */
function pgIndex(row: Record<string, unknown>): Index {
  const def = String(row.indexdef);
  const listed = /USING \w+ \((.*)\)$/.exec(def.split(' WHERE ')[0] ?? def)?.[1] ?? def;
  // A unique body is held by its md5 in PostgreSQL: a b-tree entry cannot hold a long text.
  const columns = listed.replace(/md5\((\w+)\)/g, '$1');
  return {
    table: String(row.tablename),
    columns: columns.replaceAll('"', '').replaceAll(' ', ''),
    unique: def.startsWith('CREATE UNIQUE'),
  };
}

// Tables one database forces: PostgreSQL keeps media bytes in the database (its instances share no
// folder), SQLite beside it in files.
const PG_ONLY_TABLES = new Set(['media_blob_chunks']);

const columnKey = (c: Column): string => `${c.table}.${c.column}`;
// SQLite ends every index entry with the rowid (the `id` of a table with one): PostgreSQL names it.
const indexKey = (i: Index): string =>
  `${i.table}(${i.unique ? i.columns : i.columns.replace(/,id$/, '')})${i.unique ? ' unique' : ''}`;

describePostgres('the PostgreSQL schema, migrated', () => {
  const makePg = storeMaker('postgres');

  it('has the tables, columns, kinds, nullability and indexes the migrated SQLite schema has', async () => {
    const pg = await makePg();
    const lite = tempDatabase();
    const liteColumns: Column[] = (
      lite.sqlite
        .prepare(
          `select m.name as t, p.name as c, p.type as type, p."notnull" as nn
             from sqlite_master m join pragma_table_info(m.name) p
            where m.type = 'table' and m.name not like '\\_\\_%' escape '\\' and m.name not like 'sqlite\\_%' escape '\\'`,
        )
        .all() as { t: string; c: string; type: string; nn: number }[]
    ).map((r) => ({
      table: r.t,
      column: r.c,
      type: SQLITE_KIND[r.type.toLowerCase()] ?? `unknown ${r.type}`,
      // A SQLite INTEGER PRIMARY KEY is never null whatever its declaration says.
      notNull: r.nn === 1 || r.c === 'id',
    }));
    const pgColumnRows = await storeRows(
      pg,
      `select table_name, column_name, data_type, is_nullable from information_schema.columns
        where table_schema = 'public' and table_name not like '\\_\\_%'`,
    );
    const shared = pgColumns(pgColumnRows).filter((c) => !PG_ONLY_TABLES.has(c.table));
    expect(byKey(shared, columnKey)).toEqual(byKey(liteColumns, columnKey));

    // Every index SQLite has (an expression index aside), PostgreSQL has on the same columns.
    const liteIndexes: Index[] = (
      lite.sqlite
        .prepare(
          `select m.name as t, il."unique" as u,
                  (select group_concat(name, ',') from pragma_index_xinfo(il.name) where key = 1) as cols
             from sqlite_master m join pragma_index_list(m.name) il
            where m.type = 'table' and m.name not like '\\_\\_%' escape '\\'`,
        )
        .all() as { t: string; u: number; cols: string | null }[]
    ).map((r) => ({ table: r.t, columns: r.cols ?? '', unique: r.u === 1 }));
    const pgIndexes = (
      await storeRows(pg, `select tablename, indexdef from pg_indexes where schemaname = 'public'`)
    ).map(pgIndex);
    const pgKeys = new Set(pgIndexes.map(indexKey));
    const missing = liteIndexes.filter((i) => i.columns !== '' && !pgKeys.has(indexKey(i))).map(indexKey);
    expect(missing.join('; '), 'indexes of the SQLite schema that PostgreSQL lacks').toBe('');
  });
});

// Both stores hand the rest of the code the same rows: a PostgreSQL column whose type drifted
// from its SQLite twin fails `npm run typecheck` (CI) here, before any query returns the wrong shape.
describe('the PostgreSQL schema, typed', () => {
  it('reads and writes the same row types as the SQLite schema, table by table', () => {
    expectTypeOf<typeof pgSchema.optionsBodies.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.optionsBodies.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.runs.$inferSelect>().toEqualTypeOf<sqliteSchema.RunRow>();
    expectTypeOf<typeof pgSchema.coworkers.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.coworkers.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.versions.$inferSelect>().toEqualTypeOf<sqliteSchema.VersionRow>();
    expectTypeOf<typeof pgSchema.listingPositions.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.listingPositions.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.changes.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.changes.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.mediaBlobs.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.mediaBlobs.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.mediaVersions.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.mediaVersions.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.mediaUrls.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.mediaUrls.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.mediaRuns.$inferSelect>().toEqualTypeOf<sqliteSchema.MediaRunRow>();
    expectTypeOf<typeof pgSchema.webhookEndpoints.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.webhookEndpoints.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.webhookMessages.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.webhookMessages.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.webhookDeliveries.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.webhookDeliveries.$inferSelect
    >();
    expectTypeOf<
      typeof pgSchema.webhookAttempts.$inferSelect
    >().toEqualTypeOf<sqliteSchema.WebhookAttemptRow>();
  });

  it('inserts the same values', () => {
    expectTypeOf<typeof pgSchema.runs.$inferInsert>().toEqualTypeOf<typeof sqliteSchema.runs.$inferInsert>();
    expectTypeOf<typeof pgSchema.changes.$inferInsert>().toEqualTypeOf<
      typeof sqliteSchema.changes.$inferInsert
    >();
    expectTypeOf<typeof pgSchema.webhookDeliveries.$inferInsert>().toEqualTypeOf<
      typeof sqliteSchema.webhookDeliveries.$inferInsert
    >();
    expectTypeOf<typeof pgSchema.webhookAttempts.$inferInsert>().toEqualTypeOf<
      typeof sqliteSchema.webhookAttempts.$inferInsert
    >();
  });
});
