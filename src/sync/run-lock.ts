import { and, eq } from 'drizzle-orm';
import type { MirrorDatabase } from '../db/open.js';
import {
  HEARTBEAT_MS,
  abortDeadRuns,
  currentHolder,
  markRunActive,
  markRunInactive,
  recoverDeadRuns,
} from '../db/run-holders.js';
import { runs, type RunRow } from '../db/schema.js';
import { MirrorError, type ErrorCode } from '../errors.js';

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
  const self = currentHolder();
  const startedAt = now.toISOString();
  return store.sqlite
    .transaction(() => {
      const holder = abortDeadRuns(store, now);
      if (holder) {
        throw new MirrorError(
          'SYNC_LOCKED',
          `another sync holds the lock: run ${holder.id} (pid ${holder.holderPid} on ${holder.holderHost}, started ${holder.startedAt})`,
          { runId: holder.id, pid: holder.holderPid, host: holder.holderHost, startedAt: holder.startedAt },
        );
      }
      const run = store.db
        .insert(runs)
        .values({
          status: 'running',
          startedAt,
          upstream,
          holderPid: self.pid,
          holderHost: self.host,
          holderToken: self.token,
          heartbeatAt: startedAt,
        })
        .returning()
        .get();
      markRunActive(store, run.id);
      return run;
    })
    .immediate();
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
  store.db
    .update(runs)
    .set({
      status,
      finishedAt: new Date().toISOString(),
      errorCode: error.code,
      errorMessage: error.message,
      pages: stats.pages ?? null,
      entries: stats.entries ?? null,
    })
    .where(and(eq(runs.id, runId), eq(runs.status, 'running')))
    .run();
}

/** Refreshes the run's heartbeat until the returned function is called. */
export function startHeartbeat(store: MirrorDatabase, runId: number): () => void {
  const beat = store.sqlite.prepare("update runs set heartbeat_at = ? where id = ? and status = 'running'");
  const timer = setInterval(() => {
    try {
      beat.run(new Date().toISOString(), runId);
    } catch {
      // A busy database skips one beat; the lease allows several.
    }
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
