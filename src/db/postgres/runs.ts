import type { RunStart } from '../store.js';
import { MirrorError } from '../../errors.js';
import { runRowOf } from '../run-reads.js';
import {
  ABORT_RUN_SQL,
  insertRunning,
  RUNNING_RUNS_SQL,
  syncLockedError,
  tickServed,
} from '../run-records.js';
import { abortedAs, currentHolder, deadHolderMessage } from '../run-liveness.js';
import type { RunRow } from '../schema.js';
import type { SqlPort } from '../sql-port.js';
import { ADVISORY_NAMESPACE, BEGIN_RUN_LOCK, RUN_LOCK } from './advisory-keys.js';
import type { PgContext } from './context.js';
import { runLockHolder, takeRunLock, type HeldRunLock } from './run-lock.js';
import { pgSqlPort, pgTransactionPort } from './sql-port.js';

// Runs on PostgreSQL. The lock (run-lock.ts) is freed the instant its holder's session ends: a
// `running` row is dead exactly when nobody holds the lock.

/** How a PostgreSQL holder's death is known: the session that held the lock ended. */
const LOST = 'lost connection to PostgreSQL';

/** Marks every `running` row aborted; call only while holding the run lock (its holder is gone). */
async function abortRunning(tx: SqlPort, at: string): Promise<number> {
  const running = (await tx.rows(RUNNING_RUNS_SQL)).map(runRowOf);
  for (const r of running) await tx.run(ABORT_RUN_SQL, [at, deadHolderMessage(r, LOST), r.id]);
  return running.length;
}

/**
 * The run lock for this instance, or SYNC_LOCKED naming the holder's run as `port` reads it (the
 * pool by default; a transaction's own connection when it begins a run).
 */
export async function takeLock(ctx: PgContext, port: SqlPort = pgSqlPort(ctx.pool)): Promise<HeldRunLock> {
  try {
    return await takeRunLock(ctx.target, ctx.instanceId, ctx.bounds);
  } catch (error) {
    if (!(error instanceof MirrorError && error.code === 'SYNC_LOCKED')) throw error;
    // Named by the holder's run and instance; with no run recorded, by the lock's own words.
    const [holder] = (await port.rows(`${RUNNING_RUNS_SQL} limit 1`)).map(runRowOf);
    throw holder === undefined ? error : syncLockedError(holder, holder.holderToken ?? 'unknown instance');
  }
}

/** How long an instance waits for another to finish beginning its run (a few queries and a connect). */
const BEGIN_WAIT = '30s';

/**
 * Takes the run lock and records a `running` run started as `start` says, after marking aborted
 * the run a dead holder left (its death freed the lock). The lock is kept until `releaseRun`.
 *
 * A tick is claimed with the lock, atomically: instances begin their runs one at a time (a
 * transaction-level advisory lock held to the commit of the run's row), so the second of two
 * instances serving one tick reads the first's row and is told TICK_SERVED, never SYNC_LOCKED, even
 * while that run holds the lock. runs_scheduled_for_idx holds the rule whatever the code does: a
 * claimed tick makes the insert a no-op (`on conflict do nothing`), read back as TICK_SERVED.
 */
export async function beginRun(
  ctx: PgContext,
  upstream: string,
  start: RunStart,
  now: Date,
): Promise<RunRow> {
  // Asked first, so an instance whose tick was served opens no connection for the lock.
  const early = await tickServed(pgSqlPort(ctx.pool), start.scheduledFor);
  if (early) throw early;
  // Set inside the transaction; freed here if the transaction does not commit.
  const held: { lock?: HeldRunLock } = {};
  try {
    const row = await pgTransactionPort(ctx.pool).write(async (tx) => {
      await oneBeginAtATime(ctx, tx);
      const served = await tickServed(tx, start.scheduledFor);
      if (served) throw served;
      // The holder is named over this transaction's connection: a pool of one has no other.
      held.lock = await takeLock(ctx, tx);
      const startedAt = now.toISOString();
      await abortRunning(tx, startedAt);
      return insertRunning(tx, { ...currentHolder(), token: ctx.instanceId }, upstream, start, startedAt);
    });
    if (held.lock === undefined) throw new Error('the run lock was not taken');
    ctx.locks.set(row.id, held.lock);
    return row;
  } catch (error) {
    await held.lock?.release().catch(() => undefined);
    throw error;
  }
}

/** Waits, within BEGIN_WAIT, for the instance beginning a run to commit its row or give up. */
async function oneBeginAtATime(ctx: PgContext, tx: SqlPort): Promise<void> {
  await tx.run(`set local lock_timeout = '${BEGIN_WAIT}'`);
  try {
    await tx.run('select pg_advisory_xact_lock(?, ?)', [ADVISORY_NAMESPACE, BEGIN_RUN_LOCK]);
  } catch (cause) {
    if ((cause as { code?: unknown }).code !== '55P03') throw cause;
    const label = ctx.target.label;
    throw new MirrorError(
      'SYNC_LOCKED',
      `another instance has been beginning a run on ${label} for ${BEGIN_WAIT}; try again`,
      { database: label },
      { cause },
    );
  }
  // Back to the session's own bound for the rest of the transaction: a lock on `runs` held by
  // another session is the sync's lock wait (DATABASE_SYNC_LOCK_TIMEOUT), not another instance's begin.
  await tx.run(`set local lock_timeout = ${ctx.bounds.lockTimeoutMs}`);
}

/** Frees the lock of a run this instance held. */
export async function releaseRun(ctx: PgContext, runId: number): Promise<void> {
  const lock = ctx.locks.get(runId);
  ctx.locks.delete(runId);
  await lock?.release();
}

/** Throws RUN_ABORTED when this instance no longer holds run `runId`'s lock (its connection was lost). */
export function assertHeld(ctx: PgContext, runId: number): void {
  const lock = ctx.locks.get(runId);
  if (lock === undefined || lock.lost.aborted) {
    throw new MirrorError(
      'RUN_ABORTED',
      `run ${runId} no longer holds the sync lock on ${ctx.target.label}; nothing stored`,
      { runId },
      { cause: lock?.lost.reason },
    );
  }
}

/**
 * Marks aborted the `running` runs nobody holds the lock of; how many. A transaction-level try of
 * the same lock makes it race-free: while it is held no instance can begin a run.
 */
export async function recoverDeadRuns(ctx: PgContext): Promise<number> {
  const [running] = await pgSqlPort(ctx.pool).values(`select id from runs where status = 'running' limit 1`);
  if (running === undefined) return 0;
  return pgTransactionPort(ctx.pool).write(async (tx) => {
    const [free] = await tx.values('select pg_try_advisory_xact_lock(?, ?)', [ADVISORY_NAMESPACE, RUN_LOCK]);
    return free === true ? abortRunning(tx, new Date().toISOString()) : 0;
  });
}

/** Runs as a reader should see them: `running` with nobody holding the lock reads as aborted. */
export async function asSeen(ctx: PgContext, list: RunRow[]): Promise<RunRow[]> {
  if (!list.some((r) => r.status === 'running')) return list;
  if ((await runLockHolder(ctx.pool)) !== null) return list;
  return list.map((r) => (r.status === 'running' ? abortedAs(r, deadHolderMessage(r, LOST)) : r));
}
