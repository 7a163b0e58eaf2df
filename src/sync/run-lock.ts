import type { MirrorDatabase } from '../db/open.js';
import { HEARTBEAT_MS, markRunInactive, recoverDeadRuns } from '../db/run-holders.js';
import type { RunRow } from '../db/schema.js';
import { endRun } from '../db/sqlite/run-commit.js';
import { beginRun as insertRunningRun, heartbeatWriter } from '../db/sqlite/run-lock.js';
import type { ErrorCode } from '../errors.js';

export { HEARTBEAT_MS, LEASE_MS, currentHolder, type RunHolder } from '../db/run-holders.js';

/** Marks stale runs aborted without starting one (on `serve`/`start` start-up). */
export function recoverCrashedRuns(store: MirrorDatabase): void {
  recoverDeadRuns(store);
}

/**
 * Takes the cross-process lock by inserting a `running` run (a partial unique index allows one).
 * Throws SYNC_LOCKED naming the run that holds it.
 */
export function beginRun(store: MirrorDatabase, upstream: string, now = new Date()): RunRow {
  return insertRunningRun(store, upstream, now);
}

/** Forgets a run this process held (after it was committed or ended). */
export function releaseRun(store: MirrorDatabase, runId: number): void {
  markRunInactive(store, runId);
}

/** Records a run's end without data: failed or aborted, with a code and a reason a person can act on. */
export function endRunWithoutData(
  store: MirrorDatabase,
  runId: number,
  status: 'failed' | 'aborted',
  error: { code: ErrorCode; message: string },
  stats: { pages?: number | null; entries?: number | null } = {},
): void {
  endRun(store, { runId, status, error, stats });
}

/** Refreshes the run's heartbeat until the returned function is called. */
export function startHeartbeat(store: MirrorDatabase, runId: number): () => void {
  const beat = heartbeatWriter(store, runId);
  const timer = setInterval(() => {
    try {
      beat(new Date().toISOString());
    } catch {
      // A busy database skips one beat; the lease allows several.
    }
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
