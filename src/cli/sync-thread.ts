import tty from 'node:tty';
import { workerEntry } from '../fs/worker-entry.js';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { syncHeapMbFrom } from '../config/sync-heap.js';
import type { StoreChoice } from '../db/open-store.js';
import type { ErrorCode } from '../errors.js';
import { currentHolder, holdRunsAs, markRunActive, markRunInactive } from '../db/run-liveness.js';
import { visibleLines } from './terminal.js';

// A bare `sync` runs in a worker thread with SYNC_MAX_HEAP_MB as its heap limit. Without a limit
// V8 sizes the heap from the machine and lets a long crawl's garbage pile up: a large sync's
// memory grew many times past what it held live, and stays within its goal with the limit
// (docs/benchmarks.md). A flag cannot be set once node runs (v8.setFlagsFromString does not move
// the heap limit), and a re-executed child would outlive a SIGKILL of its parent, holding the run;
// a thread dies with its process, so a kill at any instant is still one kill.

const ROLE = 'coworker-mirror sync thread';

interface ThreadData {
  role: typeof ROLE;
  /** The process's run holder token (src/db/run-liveness.ts). */
  runHolderToken: string;
  /** A thread's own stderr is a pipe to the main thread: whether the real one is a terminal. */
  stderrIsTTY: boolean;
}

function threadData(): ThreadData | null {
  if (isMainThread) return null;
  const data = workerData as Partial<ThreadData> | null;
  if (data?.role !== ROLE) return null;
  return { role: ROLE, runHolderToken: String(data.runHolderToken), stderrIsTTY: data.stderrIsTTY === true };
}

/**
 * Whether this `sync` moves into a thread: not when already in one, not under `start` (its child
 * has an IPC channel and `--max-old-space-size`), and not when node was given a heap limit.
 */
export function wantsSyncThread(): boolean {
  if (!isMainThread || process.send) return false;
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return !flags.some((flag) => /^--max[-_]old[-_]space[-_]size/.test(flag));
}

/** In `sync`'s thread: its runs are held under the process's token (see `holdRunsAs`). */
export function holdRunsAsProcess(): void {
  const data = threadData();
  if (data) holdRunsAs(data.runHolderToken);
}

/** What the run tells whoever started it: `start` over IPC, the main thread over its port. */
export function parentSender(): ((message: unknown) => boolean) | undefined {
  const port = parentPort;
  if (threadData() && port) {
    return (message) => {
      port.postMessage(message);
      return true;
    };
  }
  return process.send?.bind(process);
}

const STOP = 'stop';

/** SIGINT/SIGTERM, which only the main thread receives: it passes them on as a message. */
export function onStopSignal(handler: (signal: NodeJS.Signals) => void): () => void {
  const port = parentPort;
  if (threadData() && port) {
    const listener = (message: unknown) => {
      const m = message as { type?: unknown; signal?: unknown } | null;
      if (m?.type === STOP && typeof m.signal === 'string') handler(m.signal as NodeJS.Signals);
    };
    port.on('message', listener);
    // A port with a listener keeps the thread alive: removed when the run ends.
    return () => port.off('message', listener);
  }
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

let terminal: tty.WriteStream | undefined;

/** stderr as the sync draws on it: in a thread, the terminal itself when there is one. */
export function syncStderr(): NodeJS.WriteStream {
  if (threadData()?.stderrIsTTY) return (terminal ??= new tty.WriteStream(2));
  return process.stderr;
}

/** Sent by the thread before it opens its store: where the main thread records a thread that died. */
interface StoreMessage {
  type: 'sync-store';
  database: StoreChoice;
}

/** In the thread: names the run's store to the main thread (a no-op elsewhere). */
export function announceStore(database: StoreChoice): void {
  if (threadData()) parentPort?.postMessage({ type: 'sync-store', database } satisfies StoreMessage);
}

/** The run id of a `run-started` message (src/sync/isolated-sync.ts), checked, not trusted as typed. */
function startedRunId(message: unknown): number | null {
  const m = message as { type?: unknown; runId?: unknown } | null;
  return m?.type === 'run-started' && Number.isSafeInteger(m.runId) ? (m.runId as number) : null;
}

/**
 * Runs this same command line in a thread limited to SYNC_MAX_HEAP_MB and resolves with its exit
 * code. Called before the CLI loads: the main thread only waits, so the process holds one copy of
 * the modules. A thread that dies (out of heap) leaves its run `running`: it is ended here as
 * failed, with the reason, as `start` does for a child that dies.
 */
export async function runSyncInThread(): Promise<number> {
  const script = process.argv[1];
  if (script === undefined) throw new Error('no CLI script in process.argv');
  const maxHeapMb = syncHeapMbFrom(process.env);
  const entry = workerEntry(script);
  const worker = new Worker(entry.code, {
    eval: entry.eval,
    argv: process.argv.slice(2),
    workerData: {
      role: ROLE,
      runHolderToken: currentHolder().token,
      stderrIsTTY: process.stderr.isTTY === true,
    } satisfies ThreadData,
    resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
  });
  const forward = (signal: NodeJS.Signals) => worker.postMessage({ type: STOP, signal });
  process.once('SIGINT', forward);
  process.once('SIGTERM', forward);
  const seen: ThreadSeen = { database: null, runId: null };
  let crash: Error | null = null;
  worker.on('message', (message: unknown) => follow(seen, message));
  worker.on('error', (error) => {
    crash = error;
  });
  const code = await new Promise<number>((resolve) => worker.once('exit', resolve));
  process.off('SIGINT', forward);
  process.off('SIGTERM', forward);
  try {
    return crash === null ? code : await reportCrash(seen, maxHeapMb, crash);
  } finally {
    if (seen.runId !== null) markRunInactive(runFileOf(seen.database), seen.runId);
  }
}

/** What the thread has told the main thread so far. */
interface ThreadSeen {
  database: StoreChoice | null;
  runId: number | null;
}

/** The key run-liveness.ts tells a store's runs apart by (the SQLite file; PostgreSQL has none). */
function runFileOf(database: StoreChoice | null): { file: string } {
  return { file: database?.target.kind === 'sqlite' ? database.target.path : '' };
}

/** The thread's run is this process's: alive to whatever store this thread opens, until it ends. */
function follow(seen: ThreadSeen, message: unknown): void {
  const store = message as Partial<StoreMessage> | null;
  if (store?.type === 'sync-store' && store.database) {
    seen.database = store.database;
    return;
  }
  const runId = startedRunId(message);
  if (runId === null) return;
  seen.runId = runId;
  markRunActive(runFileOf(seen.database), runId);
}

async function reportCrash(seen: ThreadSeen, maxHeapMb: number, crash: Error): Promise<number> {
  const [{ MirrorError }, { exitCodeFor }] = await Promise.all([
    import('../errors.js'),
    import('./exit-codes.js'),
  ]);
  const outOfHeap = (crash as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
  const why = outOfHeap
    ? `ran out of its ${maxHeapMb} MiB heap (SYNC_MAX_HEAP_MB): the listing is too large for it; raise SYNC_MAX_HEAP_MB or lower SYNC_MAX_LISTING_BYTES`
    : `crashed: ${crash.message.slice(0, 300)}`;
  const { runId, database } = seen;
  const error = new MirrorError(
    'SYNC_CRASHED',
    `the sync ${why}; nothing was stored`,
    { runId, maxHeapMb },
    { cause: crash },
  );
  if (runId !== null && database !== null) await endDeadRun(database, runId, error);
  const run = runId === null ? '' : ` (run ${runId})`;
  process.stderr.write(
    `coworker-mirror: sync failed${run} [${error.code}]: ${visibleLines(error.message)}\n`,
  );
  return exitCodeFor(error.code);
}

/** Guarded by status = 'running': a run the thread did end keeps its own story. */
async function endDeadRun(
  database: StoreChoice,
  runId: number,
  error: { code: ErrorCode; message: string },
): Promise<void> {
  const [{ openStore }, { endRunWithoutData }] = await Promise.all([
    import('../db/open-store.js'),
    import('../sync/run-lock.js'),
  ]);
  const store = await openStore(database, { purpose: 'sync' });
  try {
    await endRunWithoutData(store, runId, 'failed', error);
  } finally {
    await store.close();
  }
}
