import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { eq } from 'drizzle-orm';
import type { MirrorDatabase } from './open.js';
import { runs, type RunRow } from './schema.js';

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

const PROCESS_TOKEN = randomUUID();
/** Runs this process holds right now: a row of ours not in here was left behind by a failed update. */
const activeRuns = new Set<string>();
const runKey = (store: MirrorDatabase, runId: number) => `${store.file}#${runId}`;

export function currentHolder(): RunHolder {
  return { pid: process.pid, host: hostname(), token: PROCESS_TOKEN };
}

export function markRunActive(store: MirrorDatabase, runId: number): void {
  activeRuns.add(runKey(store, runId));
}

export function markRunInactive(store: MirrorDatabase, runId: number): void {
  activeRuns.delete(runKey(store, runId));
}

/** How often a run in progress says it is alive, and how long silence means its process is gone. */
export const HEARTBEAT_MS = 15_000;
export const LEASE_MS = 120_000;

/**
 * True when the process that holds a run is gone. On this host the pid tells; a holder on another
 * host (a container recreated under a new hostname) is gone once its heartbeat is older than the lease.
 */
function holderIsDead(store: MirrorDatabase, run: RunRow, now = Date.now()): boolean {
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

/** The reason recorded on a run whose holder died. */
function deadHolderMessage(run: Pick<RunRow, 'holderPid' | 'holderHost'>): string {
  return (
    `process ${run.holderPid} on ${run.holderHost} ended while the run was in progress ` +
    `(crash, kill, or no heartbeat for ${LEASE_MS / 1000} s); nothing it fetched was stored`
  );
}

/**
 * Marks runs left `running` by a dead holder as aborted and returns the live holder's run, if any.
 * Call inside a write transaction (the lock's own), so two processes cannot both take over.
 */
export function abortDeadRuns(store: MirrorDatabase, now = new Date()): RunRow | undefined {
  const running = store.db.select().from(runs).where(eq(runs.status, 'running')).all();
  let holder: RunRow | undefined;
  for (const run of running) {
    if (!holderIsDead(store, run, now.getTime())) {
      holder = run;
      continue;
    }
    store.db
      .update(runs)
      .set({
        status: 'aborted',
        finishedAt: now.toISOString(),
        errorCode: 'RUN_ABORTED',
        errorMessage: deadHolderMessage(run),
      })
      .where(eq(runs.id, run.id))
      .run();
  }
  return holder;
}

const runningChecks = new WeakMap<MirrorDatabase, () => boolean>();

function anyRunning(store: MirrorDatabase): boolean {
  let check = runningChecks.get(store);
  if (!check) {
    const statement = store.sqlite.prepare("select 1 from runs where status = 'running' limit 1").pluck();
    runningChecks.set(store, (check = () => statement.get() !== undefined));
  }
  return check();
}

/**
 * Marks runs whose holder is dead as aborted; returns how many. It reads first (in WAL a read never
 * waits) and takes the write lock only when a dead holder is found: a server polling this while a
 * live sync commits must not block its event loop on that sync's write transaction.
 */
export function recoverDeadRuns(store: MirrorDatabase): number {
  // The server calls this every SNAPSHOT_POLL: a prepared existence check (~1 µs) spares it
  // building the query (~0.1–0.5 ms on the event loop) when, as almost always, nothing runs.
  if (!anyRunning(store)) return 0;
  const running = store.db.select().from(runs).where(eq(runs.status, 'running')).all();
  if (!running.some((run) => holderIsDead(store, run))) return 0;
  return store.sqlite
    .transaction(() => {
      const count = store.sqlite.prepare("select count(*) from runs where status = 'running'").pluck();
      const before = count.get() as number;
      abortDeadRuns(store);
      return before - (count.get() as number);
    })
    .immediate();
}

/**
 * A run as a reader should see it: `running` with a provably dead holder reads as aborted. For
 * read-only connections, which cannot record it.
 */
export function runAsSeen(store: MirrorDatabase, run: RunRow): RunRow {
  if (run.status !== 'running' || !holderIsDead(store, run)) return run;
  return { ...run, status: 'aborted', errorCode: 'RUN_ABORTED', errorMessage: deadHolderMessage(run) };
}
