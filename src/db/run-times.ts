// A row that happened at a run names the run and not its time: the time is the run's finished_at,
// stored once in `runs` (migrations change_time_from_run, coworker_times_from_runs). One definition of
// how a read gets it back, for both dialects.

/** The finished_at of the run `runColumn` names (null when it names none), a primary-key seek. */
export function runTimeSql(runColumn: string): string {
  return `(select r.finished_at from runs r where r.id = ${runColumn})`;
}

/** The times of a coworker row, selected from `c` (or a quoted table name). */
export function coworkerTimesSql(c: string): { firstSeenAt: string; removedAt: string; lastSeenAt: string } {
  return {
    firstSeenAt: runTimeSql(`${c}.first_seen_run`),
    removedAt: runTimeSql(`${c}.removed_run`),
    lastSeenAt: runTimeSql(`${c}.last_seen_run`),
  };
}
