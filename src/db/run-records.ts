import type { RunStart } from './store.js';
import { MirrorError } from '../errors.js';
import type { RunEnd } from './run-commit.js';
import { recordRunEnd } from './run-ends.js';
import { writeRunOutboxes } from './run-outbox.js';
import type { SqlPort, TransactionPort } from './sql-port.js';
import { oneRun, RUN_COLUMNS, runRowOf } from './run-reads.js';
import type { RunHolder } from './run-liveness.js';
import type { RunRow, RunTrigger } from './schema.js';
import { storableText } from './storable-text.js';
import { tickServedError } from './tick-claims.js';

// What is written of a run besides its lock and its commit, once for both dialects over the port;
// the operations' contracts are the Store's (store.ts).

/** The run that claimed a tick (`?`: its ISO time); the SQLite lock reads it inside its own transaction. */
export const RUN_OF_TICK_SQL = `select ${RUN_COLUMNS} from runs where scheduled_for = ? limit 1`;

export function runOfTick(port: SqlPort, tick: string): Promise<RunRow | undefined> {
  return oneRun(port, RUN_OF_TICK_SQL, [tick]);
}

/** TICK_SERVED naming the run that claimed `tick`, or null when none has (or no tick is named). */
export async function tickServed(port: SqlPort, tick: string | null): Promise<MirrorError | null> {
  const served = tick === null ? undefined : await runOfTick(port, tick);
  return tick === null || served === undefined ? null : tickServedError(tick, served);
}

/**
 * The `running` row of a run `holder` began (`?`s: `runningParams`). A tick another run claimed
 * makes it insert nothing (runs_scheduled_for_idx), so it answers no row. The SQLite lock runs it
 * inside its own transaction.
 */
export const INSERT_RUNNING_SQL = `insert into runs (status, started_at, upstream, holder_pid, holder_host,
  holder_token, heartbeat_at, "trigger", scheduled_for) values ('running', ?, ?, ?, ?, ?, ?, ?, ?)
  on conflict (scheduled_for) where scheduled_for is not null do nothing returning ${RUN_COLUMNS}`;

export function runningParams(holder: RunHolder, upstream: string, start: RunStart, at: string): unknown[] {
  return [at, upstream, holder.pid, holder.host, holder.token, at, start.trigger, start.scheduledFor];
}

/** The `running` row claiming `start`'s tick; TICK_SERVED when the key finds the tick claimed. */
export async function insertRunning(
  port: SqlPort,
  holder: RunHolder,
  upstream: string,
  start: RunStart,
  at: string,
): Promise<RunRow> {
  const [row] = await port.rows(INSERT_RUNNING_SQL, runningParams(holder, upstream, start, at));
  if (row !== undefined) return runRowOf(row);
  // Only a claimed tick inserts nothing.
  throw (await tickServed(port, start.scheduledFor)) ?? new Error('insert into runs returned no row');
}

/** The runs recorded `running`: held, or left so by a holder that is gone. */
export const RUNNING_RUNS_SQL = `select ${RUN_COLUMNS} from runs where status = 'running'`;

/** Marks run `?3` aborted at `?1` because its holder is gone, `?2` saying how. */
export const ABORT_RUN_SQL = `update runs set status = 'aborted', finished_at = ?, error_code = 'RUN_ABORTED',
  error_message = ? where id = ?`;

/**
 * SYNC_LOCKED naming the run that holds the lock, its process, and (PostgreSQL) the instance that
 * began it.
 */
export function syncLockedError(holder: RunRow, instance?: string): MirrorError {
  const by = `pid ${holder.holderPid} on ${holder.holderHost}, started ${holder.startedAt}`;
  return new MirrorError(
    'SYNC_LOCKED',
    `another sync holds the lock: run ${holder.id} (${instance === undefined ? by : `${by}, instance ${instance}`})`,
    {
      runId: holder.id,
      pid: holder.holderPid,
      host: holder.holderHost,
      startedAt: holder.startedAt,
      ...(instance === undefined ? {} : { instance }),
    },
  );
}

export async function heartbeat(port: SqlPort, runId: number, at: string): Promise<void> {
  await port.run(`update runs set heartbeat_at = ? where id = ? and status = 'running'`, [at, runId]);
}

export async function recordRebind(port: SqlPort, runId: number, from: string): Promise<void> {
  await port.run('update runs set rebound_from = ? where id = ?', [from, runId]);
}

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
      storableText(run.error.message),
    ],
  );
  if (id === undefined) throw new Error('insert into runs returned no id');
  return id;
}

export function endRun(writes: TransactionPort, end: RunEnd): Promise<void> {
  return writes.write(async (tx) => {
    await recordRunEnd(tx, end);
    await writeRunOutboxes(tx, end.runId, [end.outbox, end.notify]);
  });
}
