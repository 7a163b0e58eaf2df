import { SingleBar, Presets } from 'cli-progress';
import type { Config } from '../config.js';
import { MirrorError, toMirrorError } from '../errors.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { createLogger } from '../logger.js';
import { openDatabase } from '../db/open.js';
import { reportToParent } from '../sync/isolated-sync.js';
import { runSync, type SyncSummary } from '../sync/run-sync.js';
import { syncSettingsFrom } from '../sync/settings.js';

export function summaryLine(summary: SyncSummary): string {
  const c = summary.counts;
  return (
    `run ${summary.runId} succeeded: ${summary.entries} entries on ${summary.pages} pages; ` +
    `${c.added} added, ${c.changed} changed, ${c.removed} removed, ${c.returned} returned, ${c.unchanged} unchanged ` +
    `(${(summary.durationMs / 1000).toFixed(1)} s)`
  );
}

/** `sync`: one run. A progress bar on a TTY, JSON log lines otherwise; exit 0 only on success. */
export async function runSyncCommand(config: Config): Promise<number> {
  if (!config.upstreamUrl) {
    process.stderr.write(
      'coworker-mirror: sync needs an upstream: pass --upstream URL or set UPSTREAM_URL (e.g. https://example.com)\n',
    );
    return EXIT.usage;
  }
  const tty = process.stdout.isTTY === true;
  // On a TTY the bar owns stdout, so only warnings and errors are logged, to stderr.
  const logger = tty
    ? createLogger({ level: 'warn', pretty: false, destination: process.stderr })
    : createLogger({ level: config.logLevel, pretty: false });
  const bar = tty
    ? new SingleBar(
        { format: 'sync [{bar}] {value}/{total} pages', hideCursor: true },
        Presets.shades_classic,
      )
    : null;
  const store = openDatabase(config.databasePath);
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => controller.abort(new Error(`received ${signal}`));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let started = false;
    const summary = await runSync(syncSettingsFrom(config, config.upstreamUrl), {
      store,
      logger,
      signal: controller.signal,
      // Under `start`, the parent learns the run id (the admin route answers with it) and the error.
      onRunStarted: (runId) => reportToParent(process.send?.bind(process), { type: 'run-started', runId }),
      onProgress: (done, total) => {
        if (!bar) return;
        if (!started) bar.start(total, 0);
        started = true;
        bar.setTotal(total);
        bar.update(done);
      },
    });
    bar?.stop();
    process.stdout.write(`${summaryLine(summary)}\n`);
    return EXIT.ok;
  } catch (thrown) {
    bar?.stop();
    const error = thrown instanceof MirrorError ? thrown : toMirrorError(thrown);
    const { code, message, details } = error;
    reportToParent(process.send?.bind(process), { type: 'run-failed', code, message, details });
    const runId = typeof error.details.runId === 'number' ? ` (run ${error.details.runId})` : '';
    process.stderr.write(`sync failed${runId} [${error.code}]: ${error.message}\n`);
    return exitCodeFor(error.code);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    store.close();
  }
}
