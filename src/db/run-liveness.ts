import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunRow } from './schema.js';

/** What tells this process's runs apart: the database file they are recorded in. */
interface RunFile {
  readonly file: string;
}

/**
 * Who holds a `running` run, and whether that holder is provably gone. It lives beside the tables
 * rather than in sync/ because every process that opens the database (read commands and `serve`
 * included) must report a dead holder's run as aborted, not only the next sync.
 */
export interface RunHolder {
  pid: number;
  host: string;
  token: string;
}

/**
 * This process's holder token. Every sync runs in a process of its own (src/sync/isolated-sync.ts),
 * so a process is one holder.
 */
const processToken: string = randomUUID();

/** Runs this process holds right now: a row of ours not in here was left behind by a failed update. */
const activeRuns = new Set<string>();
const runKey = (store: RunFile, runId: number) => `${store.file}#${runId}`;

export function currentHolder(): RunHolder {
  return { pid: process.pid, host: hostname(), token: processToken };
}

export function markRunActive(store: RunFile, runId: number): void {
  activeRuns.add(runKey(store, runId));
}

export function markRunInactive(store: RunFile, runId: number): void {
  activeRuns.delete(runKey(store, runId));
}

/**
 * Runs held by a sync process this process started (src/sync/isolated-sync.ts): whatever becomes
 * of that process, the run's end is this process's to record, with the reason, so a dead holder's
 * recovery (at an open, at a server's poll) leaves it alone until `release` is called.
 */
const supervisedRuns = new Set<string>();

export function superviseRun(store: RunFile, runId: number): () => void {
  const key = runKey(store, runId);
  supervisedRuns.add(key);
  return () => void supervisedRuns.delete(key);
}

/** How often a run in progress says it is alive, and how long silence means its process is gone. */
export const HEARTBEAT_MS = 15_000;
export const LEASE_MS = 120_000;

/**
 * True when the process that holds a run is gone. On this host the pid tells; a holder on another
 * host (a container recreated under a new hostname) is gone once its heartbeat is older than the lease.
 */
export function holderIsDead(store: RunFile, run: RunRow, now = Date.now()): boolean {
  if (supervisedRuns.has(runKey(store, run.id))) return false;
  const self = currentHolder();
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
 * The reason recorded on a run whose holder died; `lost` says how its death is known (SQLite: a
 * silent heartbeat, PostgreSQL: the session that held the lock ended).
 */
export function deadHolderMessage(
  run: Pick<RunRow, 'holderPid' | 'holderHost'>,
  lost = `no heartbeat for ${LEASE_MS / 1000} s`,
): string {
  return (
    `process ${run.holderPid} on ${run.holderHost} ended while the run was in progress ` +
    `(crash, kill, or ${lost}); nothing it fetched was stored`
  );
}

/** A `running` run as it reads once its holder is known to be gone. */
export function abortedAs(run: RunRow, message: string): RunRow {
  return { ...run, status: 'aborted', errorCode: 'RUN_ABORTED', errorMessage: message };
}

/**
 * A run as a reader should see it: `running` with a provably dead holder reads as aborted. For
 * read-only connections, which cannot record it.
 */
export function runAsSeen(store: RunFile, run: RunRow): RunRow {
  if (run.status !== 'running' || !holderIsDead(store, run)) return run;
  return abortedAs(run, deadHolderMessage(run));
}
