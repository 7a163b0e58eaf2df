import tty from 'node:tty';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Config } from '../config/load-config.js';
import { currentHolder, markRunActive, markRunInactive } from '../db/run-liveness.js';
import { MirrorError } from '../errors.js';
import { parseChildMessage } from '../sync/isolated-sync.js';
import { exitCodeFor } from './exit-codes.js';

// A bare `sync` runs in a worker thread with SYNC_MAX_HEAP_MB as its heap limit. Without a limit
// V8 sizes the heap from the machine (4 GiB here) and lets a long crawl's garbage pile up: a
// 1,000,000-entry sync peaked at 1.1 GB RSS holding under 50 MB live; with the limit, under 200 MB
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

/**
 * Runs this same command line in a thread limited to SYNC_MAX_HEAP_MB and resolves with its exit
 * code. A thread that dies (out of heap) leaves its run `running`: it is ended here as failed, with
 * the reason, as `start` does for a child that dies.
 */
export async function runSyncInThread(config: Config): Promise<number> {
  const script = process.argv[1];
  if (script === undefined) throw new Error('no CLI script in process.argv');
  const maxHeapMb = config.sync.maxHeapMb;
  const entry = threadEntry(script);
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
  let runId: number | null = null;
  let crash: Error | null = null;
  // The thread's run is this process's: alive to whatever store this thread opens, until it ends.
  const runFile = { file: config.database.target.kind === 'sqlite' ? config.database.target.path : '' };
  worker.on('message', (raw: unknown) => {
    const message = parseChildMessage(raw);
    if (message?.type !== 'run-started') return;
    runId = message.runId;
    markRunActive(runFile, runId);
  });
  worker.on('error', (error) => {
    crash = error;
  });
  const code = await new Promise<number>((resolve) => worker.once('exit', resolve));
  process.off('SIGINT', forward);
  process.off('SIGTERM', forward);
  try {
    return crash === null ? code : await reportCrash(config, runId, crash);
  } finally {
    if (runId !== null) markRunInactive(runFile, runId);
  }
}

/**
 * The script itself, or under tsx (tests, development) a loader first: Node 20 does not apply the
 * `--import` hooks of the main thread to a worker's own imports.
 */
function threadEntry(script: string): { code: string; eval: boolean } {
  if (!/\.[cm]?ts$/.test(script)) return { code: script, eval: false };
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(pathToFileURL(script).href);
  const code = `import(${tsx}).then((tsx) => { tsx.register(); return import(${entry}); });`;
  return { code, eval: true };
}

async function reportCrash(config: Config, runId: number | null, crash: Error): Promise<number> {
  const outOfHeap = (crash as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
  const why = outOfHeap
    ? `ran out of its ${config.sync.maxHeapMb} MiB heap (SYNC_MAX_HEAP_MB): the listing is too large for it; raise SYNC_MAX_HEAP_MB or lower SYNC_MAX_LISTING_BYTES`
    : `crashed: ${crash.message.slice(0, 300)}`;
  const error = new MirrorError(
    'SYNC_CRASHED',
    `the sync ${why}; nothing was stored`,
    { runId, maxHeapMb: config.sync.maxHeapMb },
    { cause: crash },
  );
  if (runId !== null) await endDeadRun(config, runId, error);
  const run = runId === null ? '' : ` (run ${runId})`;
  process.stderr.write(`coworker-mirror: sync failed${run} [${error.code}]: ${error.message}\n`);
  return exitCodeFor(error.code);
}

/** Guarded by status = 'running': a run the thread did end keeps its own story. */
async function endDeadRun(config: Config, runId: number, error: MirrorError): Promise<void> {
  const [{ openStore }, { endRunWithoutData }] = await Promise.all([
    import('../db/open-store.js'),
    import('../sync/run-lock.js'),
  ]);
  const store = await openStore(config.database);
  try {
    await endRunWithoutData(store, runId, 'failed', error);
  } finally {
    await store.close();
  }
}
