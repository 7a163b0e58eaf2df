import { sql, type SQL } from 'drizzle-orm';

// A row that happened at a run names the run and not its time: the time is the run's finished_at,
// stored once in `runs` (migrations change_time_from_run, coworker_times_from_runs). One definition of
// how a read gets it back, for both dialects.

/** The finished_at of the run `runColumn` names (null when it names none), a primary-key seek. */
export function runTimeSql(runColumn: string): string {
  return `(select r.finished_at from runs r where r.id = ${runColumn})`;
}

type CoworkerKey =
  'uuid' | 'firstSeenRun' | 'removedRun' | 'lastSeenRun' | 'returnedCount' | 'lastReturnedRun';

/** The times of a coworker row, selected from `c` (or a quoted table name). */
export function coworkerTimesSql(c: string): { firstSeenAt: string; removedAt: string; lastSeenAt: string } {
  return {
    firstSeenAt: runTimeSql(`${c}.first_seen_run`),
    removedAt: runTimeSql(`${c}.removed_run`),
    lastSeenAt: runTimeSql(`${c}.last_seen_run`),
  };
}

/** drizzle's selection of a whole coworker row from either dialect's `coworkers`, its times from runs. */
export function coworkerRowSelectionOf<T extends Record<CoworkerKey, unknown>>(
  table: T,
): Pick<T, CoworkerKey> & {
  firstSeenAt: SQL<string>;
  removedAt: SQL<string | null>;
  lastSeenAt: SQL<string | null>;
} {
  const times = coworkerTimesSql('"coworkers"');
  return {
    uuid: table.uuid,
    firstSeenRun: table.firstSeenRun,
    firstSeenAt: sql<string>`${sql.raw(times.firstSeenAt)}`,
    removedRun: table.removedRun,
    removedAt: sql<string | null>`${sql.raw(times.removedAt)}`,
    lastSeenRun: table.lastSeenRun,
    lastSeenAt: sql<string | null>`${sql.raw(times.lastSeenAt)}`,
    returnedCount: table.returnedCount,
    lastReturnedRun: table.lastReturnedRun,
  };
}
