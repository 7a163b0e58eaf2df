import { desc, eq, sql, type SQL } from 'drizzle-orm';
import type { ChangeStreamFilter } from './change-batches.js';
import { toMirrorError } from '../errors.js';
import { changeFilterWhere } from './change-filter.js';
import { changeIdBoundSql, changeRowSelection, changeRowsOf } from './change-columns.js';
import {
  changeLineSql,
  changeLinesOf,
  LINES_QUERY,
  NO_LINES,
  tooBig,
  vouchedLines,
  type ChangeLines,
  type FoundLines,
  type LinesAnswer,
} from './change-lines.js';
import type { MirrorDatabase } from './open.js';
import { changes, runs, versions, type ChangeKind, type ChangeRow } from './schema.js';
import { prepared } from './prepared.js';

/** Named reads shared by the CLI, the history API and the list endpoint. */

export interface ChangeFilter {
  since?: string;
  until?: string;
  uuid?: string | undefined;
  /** Only these coworkers (the timeline's name filter); an empty list matches nothing. */
  uuids?: readonly string[] | undefined;
  field?: string | undefined;
  kind?: ChangeKind | undefined;
  limit: number;
  /** Keyset pagination: only changes with an id below this. */
  beforeId?: number | undefined;
}

/**
 * A change's time grows with its id (runs commit in order), so a time bound is an id bound found
 * with two seeks; filtering on time while walking ids newest-first would scan every other change.
 */
function changeIdBound(store: MirrorDatabase, side: 'since' | 'until', at: string): number | undefined {
  return prepared(store.sqlite, changeIdBoundSql(side, '?')).pluck().get(at) as number | undefined;
}

/** `changeFilterWhere` of `filter`, its time bounds found on this database. */
function changeWhere(store: MirrorDatabase, filter: ChangeStreamFilter): SQL | undefined | null {
  return changeFilterWhere(filter, changes, {
    first: filter.since === undefined ? undefined : changeIdBound(store, 'since', filter.since),
    last: filter.until === undefined ? undefined : changeIdBound(store, 'until', filter.until),
  });
}

/**
 * The SQL of `listChanges`, with `extra` aliased columns after the row's own (a read that wants
 * more per change, the CSV export's subject, selects it here); null when the filter matches nothing.
 */
export function listChangesQuery(
  store: MirrorDatabase,
  filter: ChangeFilter,
  extra: Record<string, SQL.Aliased> = {},
): { sql: string; params: unknown[] } | null {
  const where = changeWhere(store, filter);
  if (where === null) return null;
  return store.db
    .select({ ...changeRowSelection, ...extra })
    .from(changes)
    .leftJoin(versions, eq(versions.id, changes.versionId))
    .where(where)
    .orderBy(desc(changes.id))
    .limit(filter.limit)
    .toSQL();
}

/** `Store.changeIdAt`: the filter's own where, its index walked to `offset`, no row's values read. */
export function changeIdAt(store: MirrorDatabase, filter: ChangeStreamFilter, offset: number): number | null {
  const where = changeWhere(store, filter);
  if (where === null) return null;
  const query = store.db
    .select({ id: changes.id })
    .from(changes)
    .where(where)
    .orderBy(desc(changes.id))
    .limit(1)
    .offset(offset)
    .toSQL();
  const found = prepared(store.sqlite, query.sql)
    .pluck()
    .get(...query.params) as number | undefined;
  return found ?? null;
}

/** Newest first. */
export function listChanges(store: MirrorDatabase, filter: ChangeFilter): ChangeRow[] {
  const query = listChangesQuery(store, filter);
  if (query === null) return [];
  // drizzle builds the SQL (one definition of the filter), but its own `.all()` prepared it again
  // at every call and mapped each row field by field: a feed page paid the first, an export of
  // 1,000,000 changes mostly the second. The text varies only with the filter's shape.
  return changeRowsOf(
    prepared(store.sqlite, query.sql)
      .raw(true)
      .all(...query.params) as unknown[][],
  );
}

/** A change's export line, built by SQLite (`changeLineSql`) from drizzle's names of the three tables. */
const LINE_SQL = changeLineSql('"changes"', '"versions"', '"runs"', (text) => `json_quote(${text})`);

/**
 * `Store.changeLines`: the batch `listChanges(filter)` reads, as export lines SQLite writes in one
 * blob (no JS string per value, nor per line), read back by `checkedLines`; from the rows when the
 * check refuses them or the batch is past SQLite's largest text.
 */
export function changeLines(store: MirrorDatabase, filter: ChangeFilter): ChangeLines {
  const where = changeWhere(store, filter);
  if (where === null) return NO_LINES;
  const inner = store.db
    .select({ id: changes.id, line: sql<string>`${sql.raw(LINE_SQL)}`.as('line') })
    .from(changes)
    .leftJoin(runs, eq(runs.id, changes.runId))
    .leftJoin(versions, eq(versions.id, changes.versionId))
    .where(where)
    .orderBy(desc(changes.id))
    .limit(filter.limit)
    .toSQL();
  let found: LinesAnswer;
  try {
    found = prepared(store.sqlite, LINES_QUERY.sqlite(inner.sql))
      .raw(true)
      .get(...inner.params) as FoundLines | undefined;
  } catch (error) {
    found = tooBig(error, 'SQLITE_TOOBIG');
  }
  return vouchedLines(found) ?? changeLinesOf(listChanges(store, filter));
}

/** Each table with its key (coworkers has no rowid: migration coworkers_without_rowid). */
const PROBED_TABLES = [
  ['runs', 'rowid'],
  ['coworkers', 'uuid'],
  ['versions', 'rowid'],
  ['listing_positions', 'rowid'],
  ['changes', 'rowid'],
  ['options_bodies', 'rowid'],
] as const;

/**
 * A readiness probe of the database: the newest row of every table (one b-tree descent each, so
 * cheap at any size, and the pages a truncated file loses first) and whether the path still names
 * the file opened. Returns what is wrong, or null.
 */
export function databaseProblem(store: MirrorDatabase): string | null {
  const moved = store.fileProblem();
  if (moved !== null) return moved;
  try {
    for (const [table, key] of PROBED_TABLES)
      prepared(store.sqlite, `select max(${key}) from ${table}`).get();
    return null;
  } catch (error) {
    return toMirrorError(error).message;
  }
}
