import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { and, eq } from 'drizzle-orm';
import type { MirrorDatabase } from '../db/open.js';
import { runs, type RunRow } from '../db/schema.js';
import { MirrorError, type ErrorCode } from '../errors.js';

export interface RunHolder {
  pid: number;
  host: string;
  token: string;
}

const PROCESS_TOKEN = randomUUID();
/** Runs this process holds right now: a row of ours not in here was left behind by a failed update. */
const activeRuns = new Set<string>();
const runKey = (store: MirrorDatabase, runId: number) => `${store.file}#${runId}`;

export function currentHolder(): RunHolder {
  return { pid: process.pid, host: hostname(), token: PROCESS_TOKEN };
}

/** How often a run in progress says it is alive, and how long silence means its process is gone. */
export const HEARTBEAT_MS = 15_000;
export const LEASE_MS = 120_000;

/**
 * True when the process that holds a run is gone. On this host the pid tells; a holder on another
 * host (a container recreated under a new hostname) is gone once its heartbeat is older than the lease.
 */
function holderIsDead(store: MirrorDatabase, run: RunRow, self: RunHolder, now: number): boolean {
  if (run.holderHost !== self.host || run.holderPid === null) {
    const lastSign = Date.parse(run.heartbeatAt ?? run.startedAt);
    return Number.isFinite(lastSign) && now - lastSign > LEASE_MS;
  }
  if (run.holderToken === self.token) return !activeRuns.has(runKey(store, run.id));
  // Our own pid under another token: an earlier process with this pid (a restarted container's
  // PID 1) died holding the run.
  if (run.holderPid === self.pid) return true;
  try {
    process.kill(run.holderPid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else, so it is alive.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Marks runs left `running` by a crashed process as aborted. Called on every start, inside the same
 * write transaction that takes the lock, so two starting processes cannot both take it.
 */
function abortCrashedRuns(store: MirrorDatabase, self: RunHolder, now: string): RunRow | undefined {
  const nowMs = Date.parse(now);
  const running = store.db.select().from(runs).where(eq(runs.status, 'running')).all();
  let holder: RunRow | undefined;
  for (const run of running) {
    if (holderIsDead(store, run, self, nowMs)) {
      store.db
        .update(runs)
        .set({
          status: 'aborted',
          finishedAt: now,
          errorCode: 'RUN_ABORTED',
          errorMessage: `process ${run.holderPid} on ${run.holderHost} ended while the run was in progress (crash, kill, or no heartbeat for ${LEASE_MS / 1000} s); nothing it fetched was stored`,
        })
        .where(eq(runs.id, run.id))
        .run();
    } else {
      holder = run;
    }
  }
  return holder;
}

/** Marks stale runs aborted without starting one (on `serve`/`start` start-up). */
export function recoverCrashedRuns(store: MirrorDatabase): void {
  store.sqlite
    .transaction(() => abortCrashedRuns(store, currentHolder(), new Date().toISOString()))
    .immediate();
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
      const holder = abortCrashedRuns(store, self, startedAt);
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
      activeRuns.add(runKey(store, run.id));
      return run;
    })
    .immediate();
}

/** Records a run's end without data: failed or aborted, with a code and a reason a person can act on. */
/** Forgets a run this process held (after it was committed or ended). */
export function releaseRun(store: MirrorDatabase, runId: number): void {
  activeRuns.delete(runKey(store, runId));
}

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
