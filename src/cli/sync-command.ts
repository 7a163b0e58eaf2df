import type { RunStart } from '../db/store.js';
import tty from 'node:tty';
import type { Config, NamedUpstream } from '../config/load-config.js';
import { MirrorError, toMirrorError } from '../errors.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { visibleLines } from './terminal.js';
import { DEMO_UPSTREAM_LABEL } from '../demo/demo-label.js';
import { createLogger, type Logger } from '../logger.js';
import { openStore } from '../db/open-store.js';
import { reportToParent } from '../sync/isolated-sync.js';
import { runSync, type SyncSummary } from '../sync/run-sync.js';
import { checkUpstreamBinding, recordRebind } from '../sync/upstream-binding.js';
import { countWords } from './prune-command.js';
import { deliverAfterSync } from './deliver-after-sync.js';
import { refuseForeignFolder } from '../media/claim-folder.js';
import type { LogFormat } from '../sync/child-output.js';

export function summaryLine(summary: SyncSummary): string {
  const c = summary.counts;
  const m = summary.media;
  const media = m
    ? `; media: ${m.fetched} fetched, ${m.revalidated} revalidated, ${m.failed} failed, ${m.bytes} bytes`
    : '';
  const pruned = summary.pruned ? `; pruned: ${countWords(summary.pruned.counts)}` : '';
  return (
    `run ${summary.runId} succeeded: ${summary.entries} entries on ${summary.pages} pages; ` +
    `${c.added} added, ${c.changed} changed, ${c.removed} removed, ${c.returned} returned, ${c.unchanged} unchanged` +
    `${media}${pruned} (${(summary.durationMs / 1000).toFixed(1)} s)`
  );
}

/** How the sync process was started: its supervisor says (src/sync/isolated-sync.ts). */
export interface SyncProcessOptions {
  rebind: boolean;
  upstreamLabel?: string;
  logFormat?: LogFormat;
  start?: RunStart;
  /** Started by `start`: it logs the run, and its own workers deliver what the run queued. */
  forStart?: boolean;
  /** The terminal of the `sync` a person typed is this process's fd 4 (its fd 2 is a pipe). */
  terminal?: boolean;
}

/**
 * `sync`'s run, in the sync process (src/cli/sync-supervisor.ts starts it). The summary is the
 * command's output and goes to stdout; log lines and the progress bar go to stderr, so
 * `sync | jq`-style pipes and `sync > summary.txt` get only the summary. Exit 0 only on success.
 */
export async function runSyncCommand(config: Config, options: SyncProcessOptions): Promise<number> {
  const upstream = namedUpstream(config, options.upstreamLabel);
  if (!upstream) {
    const message =
      'sync needs an upstream: pass --upstream URL or set UPSTREAM_URL (e.g. https://example.com)';
    reportToParent(parentSender(), { type: 'run-failed', code: 'CONFIG_INVALID', message, details: {} });
    process.stderr.write(`coworker-mirror: ${message}\n`);
    return EXIT.usage;
  }
  const stderr = syncStderr(options.terminal === true);
  const logger = syncLogger(config, stderr, options.upstreamLabel, options.logFormat);
  const bar = await progressBar(stderr);
  const store = await openStore(config.database, { purpose: 'sync' }).catch((thrown: unknown) => {
    // Under `start`, the parent answers with this code (DB_ERROR: the database away) rather than
    // "the sync process crashed"; the terminal gets the CLI's usual one line.
    const { code, message, details } = thrown instanceof MirrorError ? thrown : toMirrorError(thrown);
    reportToParent(parentSender(), { type: 'run-failed', code, message, details });
    throw thrown;
  });
  const controller = new AbortController();
  const stopSignals = onStopSignal((signal) => controller.abort(new Error(`received ${signal}`)));
  // The IPC channel closes when the process that started the sync dies (even by SIGKILL): an
  // orphaned run would hold the lock and the upstream for nobody, so it ends as aborted and the
  // process exits.
  const onOrphaned = () => controller.abort(new Error('the process that started the sync is gone'));
  process.once('disconnect', onOrphaned);
  try {
    const reboundFrom = await checkUpstreamBinding(store, upstream.target.label, options);
    // A media folder of another database is refused before a run starts (exit 2), as a setting is.
    if (config.media.origins !== null) await refuseForeignFolder(config.media.dir, store);
    const summary = await runSync(
      { ...config, upstream },
      {
        store,
        logger,
        signal: controller.signal,
        ...(options.start ? { start: options.start } : {}),
        onRunStarted: async (runId) => {
          if (reboundFrom !== null) await recordRebind(store, runId, reboundFrom);
          // Under `start`, the parent learns the run id (the admin route answers with it) and the error.
          reportToParent(parentSender(), { type: 'run-started', runId });
        },
        onProgress: bar.onProgress,
      },
    );
    bar.stop();
    // Under `start` the parent logs the run; its stdout is the parent's log stream, JSON lines only.
    if (options.forStart !== true) process.stdout.write(`${summaryLine(summary)}\n`);
    return EXIT.ok;
  } catch (thrown) {
    bar.stop();
    return reportFailure(thrown, options.forStart === true);
  } finally {
    // Success or failure, what the run put in the outbox goes out now, within a bounded wait;
    // under `start` (an IPC channel to it) its own delivery worker sends them.
    if (options.forStart !== true) await deliverAfterSync(store, config, logger);
    stopSignals();
    process.off('disconnect', onOrphaned);
    await store.close();
  }
}

/** The configured upstream, under the label `start` gives its child (the demo's); null when none. */
function namedUpstream(config: Config, label: string | undefined): NamedUpstream | null {
  const { target } = config.upstream;
  if (!target) return null;
  return { ...config.upstream, target: label ? { ...target, label } : target };
}

function syncLogger(
  config: Config,
  stderr: NodeJS.WriteStream,
  upstreamLabel: string | undefined,
  format: LogFormat | undefined,
): Logger {
  const tty = stderr.isTTY === true;
  // On a terminal the bar shows progress, so only warnings and errors are logged beside it, as
  // lines for people (JSON lines with stacks drowned the one line that says what failed). Under
  // `start` the stream is a pipe to the parent, and the lines take the parent's format, whatever it is.
  const base = createLogger({
    level: tty && config.log.level !== 'debug' ? 'warn' : config.log.level,
    pretty: format === undefined ? tty : format === 'pretty',
    prettyFd: 2,
    destination: stderr,
  });
  // The demo's syncs (children of `start`) say so on every line, as `start` does.
  return upstreamLabel === DEMO_UPSTREAM_LABEL ? base.child({ mode: 'demo' }) : base;
}

/** A progress bar of pages on a terminal, started at the first count; does nothing elsewhere. */
async function progressBar(stream: NodeJS.WriteStream): Promise<{
  onProgress: (done: number, total: number) => void;
  stop: () => void;
}> {
  if (stream.isTTY !== true) return { onProgress: () => undefined, stop: () => undefined };
  const { SingleBar, Presets } = await import('cli-progress');
  const bar = new SingleBar(
    { format: 'sync [{bar}] {value}/{total} pages', hideCursor: true, stream },
    Presets.shades_classic,
  );
  let started = false;
  return {
    onProgress: (done, total) => {
      if (!started) bar.start(total, 0);
      started = true;
      bar.setTotal(total);
      bar.update(done);
    },
    stop: () => bar.stop(),
  };
}

/** Tells the parent (under `start`) and the terminal why the run failed; returns the exit code. */
function reportFailure(thrown: unknown, forStart: boolean): number {
  const error = thrown instanceof MirrorError ? thrown : toMirrorError(thrown);
  const { code, message, details } = error;
  reportToParent(parentSender(), { type: 'run-failed', code, message, details });
  // Under `start` the run's log line and the parent's say it, in the log's one format (a refusal,
  // SYNC_LOCKED or TICK_SERVED, is the parent's one line: never a "sync failed" at every tick).
  if (!forStart) writeFailure(error);
  return exitCodeFor(error.code);
}

function writeFailure(error: MirrorError): void {
  const runId = typeof error.details.runId === 'number' ? ` (run ${error.details.runId})` : '';
  // The message may quote what the upstream sent: its control characters are drawn, never obeyed.
  process.stderr.write(
    `coworker-mirror: sync failed${runId} [${error.code}]: ${visibleLines(error.message)}\n`,
  );
}

/** What the sync process tells whoever started it (its supervisor, over IPC). */
function parentSender(): ((message: unknown) => boolean) | undefined {
  return process.send?.bind(process);
}

/** SIGINT (Ctrl-C reaches the whole process group) or SIGTERM (passed on by the supervisor). */
function onStopSignal(handler: (signal: NodeJS.Signals) => void): () => void {
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

/** The sync's stderr: the terminal the supervisor handed over as fd 4, when there is one. */
function syncStderr(terminal: boolean): NodeJS.WriteStream {
  return terminal && tty.isatty(4) ? new tty.WriteStream(4) : process.stderr;
}
