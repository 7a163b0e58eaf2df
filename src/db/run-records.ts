import type { SqlPort } from './sql-port.js';
import { RUN_COLUMNS, runRowOf } from './run-reads.js';
import type { RunRow, RunTrigger } from './schema.js';

// What is written of a run besides its lock and its commit, once for both dialects over the port.

/** The run that claimed a tick (`?`: its ISO time); the SQLite lock reads it inside its own transaction. */
export const RUN_OF_TICK_SQL = `select ${RUN_COLUMNS} from runs where scheduled_for = ? limit 1`;

/** The run that claimed tick `tick` (its ISO time), whatever its status. */
export async function runOfTick(port: SqlPort, tick: string): Promise<RunRow | undefined> {
  const [found] = await port.rows(RUN_OF_TICK_SQL, [tick]);
  return found && runRowOf(found);
}

/** Refreshes a running run's heartbeat; a no-op once the run is no longer running. */
export async function heartbeat(port: SqlPort, runId: number, at: string): Promise<void> {
  await port.run(`update runs set heartbeat_at = ? where id = ? and status = 'running'`, [at, runId]);
}

/** Marks the run that switched the database to a new upstream. */
export async function recordRebind(port: SqlPort, runId: number, from: string): Promise<void> {
  await port.run('update runs set rebound_from = ? where id = ?', [from, runId]);
}

/**
 * A run that failed before it could record itself (its process died before taking the lock): one
 * finished `failed` row, so `runs`, `/runs/` and the API show the attempt and why. Returns its id.
 * It claims no tick (`scheduled_for` stays null): it never served one, so another instance may.
 */
export async function recordFailedRun(
  port: SqlPort,
  run: { upstream: string; startedAt: Date; trigger: RunTrigger; error: { code: string; message: string } },
): Promise<number> {
  const [id] = await port.values<number>(
    `insert into runs (status, started_at, finished_at, upstream, "trigger", error_code, error_message)
     values ('failed', ?, ?, ?, ?, ?, ?) returning id`,
    [
      run.startedAt.toISOString(),
      new Date().toISOString(),
      run.upstream,
      run.trigger,
      run.error.code,
      run.error.message,
    ],
  );
  if (id === undefined) throw new Error('insert into runs returned no id');
  return id;
}
