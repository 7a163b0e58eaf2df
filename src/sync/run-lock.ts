import type { RunStart, Store } from '../db/store.js';
import { HEARTBEAT_MS } from '../db/run-liveness.js';
import type { RunRow } from '../db/schema.js';
import type { ErrorCode } from '../errors.js';
import { COMMAND_START } from '../db/tick-claims.js';

export { HEARTBEAT_MS, LEASE_MS, currentHolder, type RunHolder } from '../db/run-liveness.js';

/** Marks stale runs aborted without starting one (on `serve`/`start` start-up). */
export async function recoverCrashedRuns(store: Store): Promise<void> {
  await store.recoverDeadRuns();
}

/**
 * Takes the cross-process lock by inserting a `running` run (a partial unique index allows one),
 * claiming the tick `start` names, if any. Rejects with TICK_SERVED naming the run that claimed
 * that tick, else SYNC_LOCKED naming the run that holds the lock.
 */
export function beginRun(
  store: Store,
  upstream: string,
  start: RunStart = COMMAND_START,
  now = new Date(),
): Promise<RunRow> {
  return store.beginRun(upstream, start, now);
}

/** Forgets a run this process held (after it was committed or ended). */
export function releaseRun(store: Store, runId: number): Promise<void> {
  return store.releaseRun(runId);
}

/** Records a run's end without data: failed or aborted, with a code and a reason a person can act on. */
export function endRunWithoutData(
  store: Store,
  runId: number,
  status: 'failed' | 'aborted',
  error: { code: ErrorCode; message: string },
  stats: { pages?: number | null; entries?: number | null } = {},
): Promise<void> {
  return store.endRun({ runId, status, error, stats });
}

/** Refreshes the run's heartbeat until the returned function is called. */
export function startHeartbeat(store: Store, runId: number): () => void {
  const timer = setInterval(() => {
    // A busy database skips one beat; the lease allows several.
    store.heartbeat(runId, new Date().toISOString()).catch(() => undefined);
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
