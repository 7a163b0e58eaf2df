import { MirrorError } from '../../errors.js';
import type { SqliteHandle } from './handle.js';

type Sqlite = SqliteHandle['sqlite'];

/** Tables a first sync fills from nothing. */
export const BULK_TABLES = ['versions', 'listing_positions', 'changes'] as const;

/** Whether the store holds no listing yet: the commit is then a first sync's bulk load. */
export function holdsNoListing(sqlite: Sqlite): boolean {
  return BULK_TABLES.every(
    (table) => sqlite.prepare(`select exists (select 1 from ${table})`).pluck().get() === 0,
  );
}

/**
 * A first sync's commit (the store holds no listing yet) runs with `foreign_keys` off, and the commit checks the same references
 * itself, set-based, before it ends (`checkRunReferences`). Row by row, SQLite looks up each new
 * version's coworker in the listing's order, a random uuid order: on a large first sync that made
 * the versions insert several times slower, and the whole commit much slower (docs/benchmarks.md).
 * The pragma cannot change inside a transaction, hence around it; it is put back whatever happens.
 * Set while another transaction of the connection is open it does nothing, and the commit then
 * runs with the foreign keys on: slower, as correct.
 */
export async function withBulkForeignKeys<T>(sqlite: Sqlite, work: () => Promise<T>): Promise<T> {
  if (!holdsNoListing(sqlite) || sqlite.pragma('foreign_keys', { simple: true }) !== 1) return work();
  sqlite.pragma('foreign_keys = OFF');
  try {
    return await work();
  } finally {
    sqlite.pragma('foreign_keys = ON');
  }
}

/**
 * Each reference the commit's rows make, as the foreign keys would have checked it: every row the
 * run wrote or changed, walked in an index's order (a version's coworker by uuid, a position's or
 * a change's version by id). Run ids need no walk: the rows name this run, which the commit has
 * just found running, and a removal's last seen run, checked here.
 */
const REFERENCES: readonly { what: string; sql: string }[] = [
  {
    what: 'a version refers to a coworker that does not exist',
    sql: `select v.id from versions v where v.valid_from_run = ?
           and not exists (select 1 from coworkers c where c.uuid = v.uuid) limit 1`,
  },
  {
    what: 'a listing position refers to a version that does not exist',
    sql: `select lp.id from listing_positions lp where lp.valid_from_run = ?
           and not exists (select 1 from versions v where v.id = lp.version_id) limit 1`,
  },
  {
    what: 'a change refers to a version that does not exist',
    sql: `select ch.id from changes ch where ch.run_id = ? and ch.version_id is not null
           and not exists (select 1 from versions v where v.id = ch.version_id) limit 1`,
  },
  {
    what: 'a removed coworker refers to a last seen run that does not exist',
    sql: `select c.uuid from coworkers c where c.removed_run = ? and c.last_seen_run is not null
           and not exists (select 1 from runs r where r.id = c.last_seen_run) limit 1`,
  },
];

/**
 * Inside the commit's transaction, when foreign keys are off: a reference that would not hold
 * fails the commit (and rolls it back) as SQLite's own check would have. By construction none
 * fails; this is the store's integrity kept, not a path the sync expects to take.
 */
export function checkRunReferences(sqlite: Sqlite, runId: number): void {
  if (sqlite.pragma('foreign_keys', { simple: true }) === 1) return;
  for (const { what, sql } of REFERENCES) {
    const row = sqlite.prepare(sql).pluck().get(runId) as number | string | undefined;
    if (row !== undefined) {
      throw new MirrorError(
        'DB_ERROR',
        `run ${runId} was not stored: ${what} (row ${String(row)}); this is a bug of the mirror, please report it`,
        { runId, row: String(row) },
      );
    }
  }
}
