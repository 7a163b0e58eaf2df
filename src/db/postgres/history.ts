import { desc, eq, sql, type SQL } from 'drizzle-orm';
import type { ChangeStreamFilter } from '../change-batches.js';
import { changeFilterWhere } from '../change-filter.js';
import { changeIdBoundSql } from '../change-columns.js';
import { entryField } from '../entry-fields.js';
import { named, type NamedCoworker } from '../name-queries.js';
import type { ChangeFilter } from '../queries.js';
import type { ChangeRow } from '../schema.js';
import { changeRowSelection } from './change-rows.js';
import type { PgContext } from './context.js';
import { changes, runs, versions } from './schema.js';
import {
  changeLineSql,
  changeLinesOf,
  LINES_QUERY,
  NO_LINES,
  tooBig,
  vouchedLines,
  type ChangeLines,
  type LinesAnswer,
} from '../change-lines.js';
import { one, preparedRows, rows, tuples } from './sql.js';

// Changes and names on PostgreSQL: the twin of src/db/queries.ts's change reads and
// src/db/name-queries.ts, with the same orders (coworkers and versions: src/db/history-reads.ts).

/** A change's time grows with its id, so a time bound is an id bound (changeIdBoundSql). */
async function changeIdBound(
  ctx: PgContext,
  side: 'since' | 'until',
  at: string,
): Promise<number | undefined> {
  return (await one<{ id: number }>(ctx.pool, changeIdBoundSql(side, '$1'), [at]))?.id;
}

/** `changeFilterWhere` of `filter`, its time bounds found on this database. */
async function changeWhere(ctx: PgContext, filter: ChangeStreamFilter): Promise<SQL | undefined | null> {
  return changeFilterWhere(filter, changes, {
    first: filter.since === undefined ? undefined : await changeIdBound(ctx, 'since', filter.since),
    last: filter.until === undefined ? undefined : await changeIdBound(ctx, 'until', filter.until),
  });
}

/** Newest first. */
export async function listChanges(ctx: PgContext, filter: ChangeFilter): Promise<ChangeRow[]> {
  const where = await changeWhere(ctx, filter);
  if (where === null) return [];
  return ctx.db
    .select(changeRowSelection)
    .from(changes)
    .leftJoin(versions, eq(versions.id, changes.versionId))
    .where(where)
    .orderBy(desc(changes.id))
    .limit(filter.limit);
}

/** A change's export line, built by PostgreSQL (`changeLineSql`); `to_json` of NULL is NULL, JSON's null here. */
const LINE_SQL = changeLineSql(
  '"changes"',
  '"versions"',
  '"runs"',
  (text) => `coalesce(to_json((${text})::text)::text, 'null')`,
);

/** `Store.changeLines`, as SQLite's: one bytea a batch, read back by `checkedLines`. */
export async function changeLines(ctx: PgContext, filter: ChangeFilter): Promise<ChangeLines> {
  const where = await changeWhere(ctx, filter);
  if (where === null) return NO_LINES;
  const inner = ctx.db
    .select({ id: changes.id, line: sql<string>`${sql.raw(LINE_SQL)}`.as('line') })
    .from(changes)
    .leftJoin(runs, eq(runs.id, changes.runId))
    .leftJoin(versions, eq(versions.id, changes.versionId))
    .where(where)
    .orderBy(desc(changes.id))
    .limit(filter.limit)
    .toSQL();
  const found: LinesAnswer = await tuples<[number, number | null, Buffer | null]>(
    ctx.pool,
    LINES_QUERY.postgres(inner.sql),
    inner.params,
  ).then(
    ([row]) => row,
    (error: unknown) => tooBig(error, '54000'),
  );
  return vouchedLines(found) ?? changeLinesOf(await listChanges(ctx, filter));
}

/** `Store.changeIdAt`, as SQLite's. */
export async function changeIdAt(
  ctx: PgContext,
  filter: ChangeStreamFilter,
  offset: number,
): Promise<number | null> {
  const where = await changeWhere(ctx, filter);
  if (where === null) return null;
  const found = await ctx.db
    .select({ id: changes.id })
    .from(changes)
    .where(where)
    .orderBy(desc(changes.id))
    .limit(1)
    .offset(offset);
  return found[0]?.id ?? null;
}

/**
 * The latest version of each appearance of each uuid, as name-queries.ts's LATEST_EACH: an
 * appearance that left a listing still showing its coworker is no longer its name.
 */
const LATEST_EACH = `select v.uuid, v.slot, v.body, c.removed_run is not null as removed
    from versions v join coworkers c on c.uuid = v.uuid
   where v.id = (select max(w.id) from versions w where w.uuid = v.uuid and w.slot = v.slot)
     and (v.valid_to_run is null or c.removed_run is not null)`;

interface Appearance {
  uuid: string;
  slot: number;
  body: string;
  removed: boolean;
}

const namedOf = (a: Appearance): NamedCoworker =>
  named({
    uuid: a.uuid,
    name: entryField(a.body, 'name'),
    post: entryField(a.body, 'post'),
    removed: a.removed ? 1 : 0,
  });

export async function namesOf(ctx: PgContext, uuids: Iterable<string>): Promise<Map<string, string>> {
  const wanted = [...new Set(uuids)];
  if (wanted.length === 0) return new Map();
  const found = await rows<Appearance>(
    ctx.pool,
    `${LATEST_EACH} and v.uuid = any($1::text[]) order by v.slot`,
    [wanted],
  );
  // The first appearance names the uuid.
  const first = new Map<string, Appearance>();
  for (const a of found) if (!first.has(a.uuid)) first.set(a.uuid, a);
  const names = new Map<string, string>();
  for (const uuid of wanted) {
    const a = first.get(uuid);
    if (a) names.set(uuid, namedOf(a).name);
  }
  return names;
}

/** SQLite's LIKE: case-insensitive for ASCII letters only. */
const asciiLower = (text: string): string => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
/** SQLite compares text by its UTF-8 bytes. */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * A field of the entry text `body` read in SQL (migration entry_field_function): its text when it
 * is a JSON string, else `body` is selected too and read here, as SQLite's `->>` would read it.
 */
export const entryFieldSql = (body: string, key: string, as: string): string =>
  `cross join lateral coworker_mirror_entry_field(${body}, '${key}') ${as}`;

interface FoundName {
  uuid: string;
  slot: number;
  name: string | null;
  post: string | null;
  /** The entry, when a field is not a plain string (read in TypeScript then). */
  body: string | null;
  removed: boolean;
}

/**
 * Coworkers whose latest name (of any appearance) contains `text`, case-insensitively (ASCII),
 * present ones first, then by name; matched in SQL on the names the database extracts (only the
 * matches travel, never every entry), the rare entry whose name is not a string read here.
 */
export async function findByName(ctx: PgContext, text: string, limit = 50): Promise<NamedCoworker[]> {
  const needle = asciiLower(text);
  const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  // lower() of a C-collated text folds ASCII letters only, as SQLite's LIKE does.
  const found = await preparedRows<FoundName>(
    ctx.pool,
    'find_by_name',
    `select l.uuid, l.slot, n.value as name, p.value as post, l.removed,
            case when n.other or p.other then l.body end as body
       from (${LATEST_EACH}) l ${entryFieldSql('l.body', 'name', 'n')} ${entryFieldSql('l.body', 'post', 'p')}
      where n.other or lower(n.value collate "C") like $1
      order by l.uuid, l.slot`,
    [pattern],
  );
  const byUuid = new Map<string, { coworker: NamedCoworker; number: number | null }>();
  for (const row of found) {
    if (byUuid.has(row.uuid)) continue;
    if (row.body === null) {
      byUuid.set(row.uuid, { coworker: namedOfFields(row), number: null });
      continue;
    }
    const name = entryField(row.body, 'name');
    // SQLite's LIKE reads a text as C does: up to its first NUL.
    const text = String(name).split('\0', 1)[0] ?? '';
    if (name === null || !asciiLower(text).includes(needle)) continue;
    byUuid.set(row.uuid, {
      coworker: namedOf({ ...row, body: row.body }),
      number: typeof name === 'number' ? name : null,
    });
  }
  // SQLite's order: a number (a name ->> reads as one) before any text, texts by their bytes.
  return [...byUuid.values()]
    .sort(
      (a, b) =>
        Number(a.coworker.removed) - Number(b.coworker.removed) ||
        (a.number === null ? 1 : 0) - (b.number === null ? 1 : 0) ||
        (a.number ?? 0) - (b.number ?? 0) ||
        (a.number === null ? byBytes(a.coworker.name, b.coworker.name) : 0) ||
        byBytes(a.coworker.uuid, b.coworker.uuid),
    )
    .slice(0, limit)
    .map((c) => c.coworker);
}

const namedOfFields = (row: FoundName): NamedCoworker =>
  named({ uuid: row.uuid, name: row.name, post: row.post, removed: row.removed ? 1 : 0 });
