import { spawn, type ChildProcess } from 'node:child_process';
import { z } from 'zod';
import type { Store } from '../db/store.js';
import { errorCodes, MirrorError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { endRunWithoutData } from './run-lock.js';
import { childOutput, type LogFormat } from './child-output.js';

/**
 * Runs each sync of `start` in a child process (`coworker-mirror sync`) with its own heap limit, so
 * whatever the upstream makes the sync do (a heap blown by a huge listing, a stack overflow, a
 * stall) happens on another event loop and another heap: the server keeps answering, and the run is
 * recorded as failed with a reason, its lock released, the next tick free to run.
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

/** The child's side: sends one message to the parent when it runs under `start` (no-op otherwise). */
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
  /** Environment of the child: the settings of the sync, as variables. */
  env: Readonly<Record<string, string | undefined>>;
  maxHeapMb: number;
  /** The child enforces SYNC_MAX_DURATION itself; past it plus a grace the parent kills it. */
  maxDurationMs: number;
  /** That grace; 30 s unless a test needs a watchdog it can wait for. */
  watchdogGraceMs?: number;
  /** The database itself: a child that dies before its run row is recorded in it directly. */
  store: Store;
  /** The upstream as runs name it: a child that dies before its run row is recorded under it. */
  upstream: string;
  logger: Logger;
  /** How the parent logs: the child logs so too, on a terminal as in a log collector. */
  logFormat: LogFormat;
  /** Where the child's log lines go (the parent's stdout and stderr). */
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
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
}

/**
 * One sync in a child process. Resolves when it succeeded; rejects with a MirrorError otherwise:
 * the child's own error when it reported one, else SYNC_CRASHED or SYNC_TIMEOUT, recorded on the
 * run row the dead child left `running`.
 */
export async function runIsolatedSync(
  options: IsolatedSyncOptions,
  signal: AbortSignal,
  onRunStarted: (runId: number) => void,
): Promise<void> {
  const startedAt = new Date();
  const child = spawn(
    options.execPath,
    [
      ...options.nodeArgs,
      `--max-old-space-size=${options.maxHeapMb}`,
      options.cliPath,
      'sync',
      '--log-format',
      options.logFormat,
      ...(options.syncArgs ?? []),
    ],
    { env: options.env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  const outcome = await watch(child, options, signal, onRunStarted);
  if (outcome.code === 0) return;
  if (outcome.failure) {
    const { code, message, details } = outcome.failure;
    throw new MirrorError(code, message, details);
  }
  const error = deathError(outcome, options);
  await recordDeath(options, outcome, error, startedAt);
  options.logger.error(
    { err: error, runId: outcome.runId, exitCode: outcome.code, signal: outcome.signal },
    'sync process died',
  );
  throw error;
}

/**
 * Ends the dead child's run row; a child that died before writing one (killed at start-up, a crash
 * while opening the database) gets a failed row of its own, so the attempt is not only a log line.
 * A shutdown that stopped a child before its run began leaves nothing to record.
 */
async function recordDeath(
  options: IsolatedSyncOptions,
  outcome: ChildOutcome,
  error: MirrorError,
  startedAt: Date,
): Promise<void> {
  try {
    if (outcome.runId !== null) {
      // Guarded by status = 'running': a row the child did end keeps its own story.
      const status = error.code === 'RUN_ABORTED' ? 'aborted' : 'failed';
      await endRunWithoutData(options.store, outcome.runId, status, error);
    } else if (outcome.killedBy !== 'abort') {
      outcome.runId = await options.store.recordFailedRun({ upstream: options.upstream, startedAt, error });
      error.details.runId = outcome.runId;
    }
  } catch (cause) {
    options.logger.error({ err: cause, runId: outcome.runId }, 'could not record the dead sync process');
  }
}

function watch(
  child: ChildProcess,
  options: IsolatedSyncOptions,
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
  options: IsolatedSyncOptions,
  outcome: ChildOutcome,
  onRunStarted: (runId: number) => void,
): void {
  child.stdout?.pipe(options.stdout, { end: false });
  const stderr = childOutput(options.logFormat, options.stderr, options.logger);
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
      onRunStarted(message.runId);
    } else outcome.failure = message;
  });
}

function watchdogMs(options: IsolatedSyncOptions): number {
  return options.maxDurationMs + (options.watchdogGraceMs ?? WATCHDOG_GRACE_MS);
}

function deathError(outcome: ChildOutcome, options: IsolatedSyncOptions): MirrorError {
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
