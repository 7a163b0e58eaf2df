import type { RunStart, Store } from '../db/store.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { z } from 'zod';
import type { OpenedStore } from '../db/open-store.js';
import { errorCodes, MirrorError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { superviseRun } from '../db/run-liveness.js';
import { endRunWithoutData } from './run-lock.js';
import { childOutput, type LogFormat } from './child-output.js';

/**
 * The one way a sync runs, whoever starts it (`start`'s schedule, the admin route, a bare `sync`):
 * in a child process (`coworker-mirror sync`) with its own heap limit and a watchdog, so whatever
 * the upstream makes the sync do (a heap blown by a huge listing, a native crash, a stall) happens
 * on another event loop and another heap: the server keeps answering, a cron job gets an exit code,
 * and the run is recorded as failed with a reason, its lock released, the next run free to go.
 * The child is the run's holder; it ends its run as aborted when the process that started it dies
 * (its IPC channel closes), so a kill of either is recorded (docs/decisions/).
 */

/** What the child tells the parent over the IPC channel; parsed, never trusted as typed. */
const childMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run-started'), runId: z.number().int().positive() }),
  z.object({
    type: z.literal('run-failed'),
    code: z.enum(errorCodes),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  }),
]);
type ChildMessage = z.infer<typeof childMessageSchema>;

/** A message of a child (or of `sync`'s thread) as sent; null when it is not one. */
export function parseChildMessage(raw: unknown): ChildMessage | null {
  const parsed = childMessageSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** The child's side: sends one message to the process that started it (a no-op without one). */
export function reportToParent(
  send: ((message: unknown) => boolean) | undefined,
  message: ChildMessage,
): void {
  try {
    send?.(message);
  } catch {
    // The parent went away; the run row is the record that matters.
  }
}

export interface IsolatedSyncOptions {
  /** The node executable, and the arguments before `sync`: node flags and the CLI script. */
  execPath: string;
  nodeArgs: readonly string[];
  cliPath: string;
  /** Arguments after `sync`. */
  syncArgs?: readonly string[];
  /** What started this run and the tick it claims: handed to the child, which records them. */
  start: RunStart;
  /** Environment of the child: the settings of the sync, as variables. */
  env: Readonly<Record<string, string | undefined>>;
  maxHeapMb: number;
  /** The child enforces SYNC_MAX_DURATION itself; past it plus a grace the parent kills it. */
  maxDurationMs: number;
  /** That grace; 30 s unless a test needs a watchdog it can wait for. */
  watchdogGraceMs?: number;
  /**
   * The database, where a dead child's run is ended (or, when it died before writing one, recorded
   * as failed).
   */
  store: Store;
  /** The upstream as runs name it: a child that dies before its run row is recorded under it. */
  upstream: string;
  logger: Logger;
  /**
   * How the parent logs: the child logs so too, on a terminal as in a log collector, and its other
   * stderr lines are shaped to it. Unset, the child picks its own (as a bare `sync` does) and its
   * stderr passes on as it is.
   */
  logFormat?: LogFormat;
  /** Where the child's stdout goes: a stream, or the parent's own (`inherit`: the `sync` summary). */
  stdout: NodeJS.WritableStream | 'inherit';
  /** Where the child's stderr goes, its tail kept to tell why it died. */
  stderr: NodeJS.WritableStream;
  /**
   * The parent's stderr is a terminal: it is handed to the child as its fd 4 (`--terminal`), where
   * it draws its progress bar and logs for a person, while fd 2 stays a pipe that shows the parent
   * V8's last words.
   */
  terminal?: boolean;
}

/**
 * The options of a caller that keeps no store open while the child runs (a bare `sync`): a way to
 * open it, only to record a dead child, closed once written.
 */
export type SyncProcessOptions = Omit<IsolatedSyncOptions, 'store'> & {
  store: Store | { file: string; open: () => Promise<OpenedStore> };
};

/** How a child ended: no error, or the error, and whether the child said it itself. */
export interface SyncProcessEnd {
  error: MirrorError | null;
  /** The child reported the error itself (and wrote it where it writes): not a death. */
  reported: boolean;
}

/** A child that ignores SIGTERM this long after an abort is killed. */
const KILL_AFTER_MS = 5_000;
/** The child's own deadline fires first; the grace is for a child too stuck to honour it. */
const WATCHDOG_GRACE_MS = 30_000;
const STDERR_TAIL_BYTES = 4096;

interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  runId: number | null;
  failure: Extract<ChildMessage, { type: 'run-failed' }> | null;
  stderrTail: string;
  killedBy: 'watchdog' | 'abort' | null;
  /** Lets the run go to a dead holder's recovery again, once its end is recorded. */
  release: () => void;
}

/**
 * One sync in a child process. Resolves when it succeeded; rejects with a MirrorError otherwise:
 * the child's own error when it reported one, else SYNC_CRASHED or SYNC_TIMEOUT, recorded on the
 * run row the dead child left `running`.
 */
export async function runIsolatedSync(
  options: SyncProcessOptions,
  signal: AbortSignal,
  onRunStarted: (runId: number) => void,
): Promise<void> {
  const end = await superviseSync(options, signal, onRunStarted);
  if (end.error) throw end.error;
}

/**
 * One sync in a child process, to its end: the child's exit code and error when it failed, a
 * death (crash, out of heap, watchdog, shutdown) recorded on its run and logged.
 */
export async function superviseSync(
  options: SyncProcessOptions,
  signal: AbortSignal,
  onRunStarted: (runId: number) => void,
): Promise<SyncProcessEnd> {
  const startedAt = new Date();
  const child = spawn(
    options.execPath,
    [
      ...options.nodeArgs,
      `--max-old-space-size=${options.maxHeapMb}`,
      options.cliPath,
      'sync',
      '--sync-process',
      ...(options.logFormat ? ['--log-format', options.logFormat] : []),
      ...(options.terminal === true ? ['--terminal'] : []),
      ...(options.syncArgs ?? []),
      ...startArgs(options.start),
    ],
    {
      env: options.env,
      stdio: [
        'ignore',
        options.stdout === 'inherit' ? 'inherit' : 'pipe',
        'pipe',
        'ipc',
        ...(options.terminal === true ? [2] : []),
      ],
    },
  );
  const outcome = await watch(child, options, signal, onRunStarted);
  try {
    if (outcome.code === 0) return { error: null, reported: false };
    if (outcome.failure) {
      const { code, message, details } = outcome.failure;
      return { error: new MirrorError(code, message, details), reported: true };
    }
    const error = deathError(outcome, options);
    await recordDeath(options, outcome, error, startedAt);
    options.logger.error(
      { err: error, runId: outcome.runId, exitCode: outcome.code, signal: outcome.signal },
      'sync process died',
    );
    return { error, reported: false };
  } finally {
    outcome.release();
  }
}

/**
 * Ends the dead child's run row; a child that died before writing one (killed at start-up, a crash
 * while opening the database) gets a failed row of its own, so the attempt is not only a log line.
 * A shutdown that stopped a child before its run began leaves nothing to record.
 */
async function recordDeath(
  options: SyncProcessOptions,
  outcome: ChildOutcome,
  error: MirrorError,
  startedAt: Date,
): Promise<void> {
  if (outcome.runId === null && outcome.killedBy === 'abort') return;
  try {
    const given = options.store;
    const opened = 'open' in given ? await given.open() : null;
    const store = opened ?? (given as Store);
    try {
      if (outcome.runId !== null) {
        // Guarded by status = 'running': a row the child did end keeps its own story.
        const status = error.code === 'RUN_ABORTED' ? 'aborted' : 'failed';
        await endRunWithoutData(store, outcome.runId, status, error);
        error.details.runId = outcome.runId;
      } else {
        outcome.runId = await store.recordFailedRun({
          upstream: options.upstream,
          startedAt,
          trigger: options.start.trigger,
          error,
        });
        error.details.runId = outcome.runId;
      }
    } finally {
      await opened?.close();
    }
  } catch (cause) {
    options.logger.error({ err: cause, runId: outcome.runId }, 'could not record the dead sync process');
  }
}

/** The child's hidden `sync` flags saying what started it (`src/cli/program.ts`). */
function startArgs(start: RunStart): string[] {
  const tick = start.scheduledFor === null ? [] : ['--scheduled-for', start.scheduledFor];
  return ['--trigger', start.trigger, ...tick];
}

function watch(
  child: ChildProcess,
  options: SyncProcessOptions,
  signal: AbortSignal,
  onRunStarted: (runId: number) => void,
): Promise<ChildOutcome> {
  const outcome: ChildOutcome = {
    code: null,
    signal: null,
    runId: null,
    failure: null,
    stderrTail: '',
    killedBy: null,
    release: () => undefined,
  };
  follow(child, options, outcome, onRunStarted);
  let killTimer: NodeJS.Timeout | undefined;
  const kill = (why: 'watchdog' | 'abort') => {
    outcome.killedBy ??= why;
    if (why === 'watchdog') child.kill('SIGKILL');
    else {
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    }
  };
  const onAbort = () => kill('abort');
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  const watchdog = setTimeout(() => kill('watchdog'), watchdogMs(options));
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(watchdog);
      clearTimeout(killTimer);
      signal.removeEventListener('abort', onAbort);
      reject(
        new MirrorError(
          'SYNC_CRASHED',
          `cannot start the sync process: ${error.message}`,
          {},
          { cause: error },
        ),
      );
    });
    child.once('close', (code, exitSignal) => {
      clearTimeout(watchdog);
      clearTimeout(killTimer);
      signal.removeEventListener('abort', onAbort);
      resolve({ ...outcome, code, signal: exitSignal });
    });
  });
}

/** Passes the child's output on, keeping the tail of its stderr, and reads what it reports. */
function follow(
  child: ChildProcess,
  options: SyncProcessOptions,
  outcome: ChildOutcome,
  onRunStarted: (runId: number) => void,
): void {
  if (options.stdout !== 'inherit') child.stdout?.pipe(options.stdout, { end: false });
  const stderr = childOutput(options.logFormat ?? 'pretty', options.stderr, options.logger);
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    stderr.write(text);
    outcome.stderrTail = (outcome.stderrTail + text).slice(-STDERR_TAIL_BYTES);
  });
  child.stderr?.on('end', () => stderr.end());
  child.on('message', (raw) => {
    const message = parseChildMessage(raw);
    if (!message) return;
    if (message.type === 'run-started') {
      outcome.runId = message.runId;
      // Should the child die, its run is ended here with the reason, not as a dead holder's.
      outcome.release = superviseRun({ file: options.store.file }, message.runId);
      onRunStarted(message.runId);
    } else outcome.failure = message;
  });
}

function watchdogMs(options: SyncProcessOptions): number {
  return options.maxDurationMs + (options.watchdogGraceMs ?? WATCHDOG_GRACE_MS);
}

function deathError(outcome: ChildOutcome, options: SyncProcessOptions): MirrorError {
  const how = outcome.signal ? `signal ${outcome.signal}` : `exit code ${outcome.code}`;
  const details = { exitCode: outcome.code, signal: outcome.signal, maxHeapMb: options.maxHeapMb };
  let code: ErrorCode = 'SYNC_CRASHED';
  let why: string;
  if (outcome.killedBy === 'watchdog') {
    code = 'SYNC_TIMEOUT';
    why = `did not end within ${Math.round(watchdogMs(options) / 1000)} s (SYNC_MAX_DURATION and a grace) and was killed`;
  } else if (outcome.killedBy === 'abort') {
    code = 'RUN_ABORTED';
    why = 'was stopped by the shutdown';
  } else if (/heap out of memory|Reached heap limit|allocation failed/i.test(outcome.stderrTail)) {
    why = `ran out of its ${options.maxHeapMb} MiB heap (SYNC_MAX_HEAP_MB): the listing is too large for it; raise SYNC_MAX_HEAP_MB or lower SYNC_MAX_LISTING_BYTES`;
  } else {
    const last = outcome.stderrTail.trim().split('\n').at(-1) ?? '';
    why = `crashed${last ? `: ${last.slice(0, 300)}` : ''}`;
  }
  return new MirrorError(code, `the sync process (${how}) ${why}; nothing was stored`, details);
}
