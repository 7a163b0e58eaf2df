import { SingleBar, Presets } from 'cli-progress';
import type { Config } from '../config.js';
import { MirrorError, toMirrorError } from '../errors.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { DEMO_UPSTREAM_LABEL } from '../demo-label.js';
import { createLogger } from '../logger.js';
import { openDatabase } from '../db/open.js';
import { reportToParent } from '../sync/isolated-sync.js';
import { runSync, type SyncSummary } from '../sync/run-sync.js';
import { syncSettingsFrom } from '../sync/settings.js';
import { deliverAfterSync } from '../webhooks/service.js';
import { checkUpstreamBinding, recordRebind } from '../upstream-binding.js';

export function summaryLine(summary: SyncSummary): string {
  const c = summary.counts;
  const m = summary.media;
  const media = m
    ? `; media: ${m.fetched} fetched, ${m.revalidated} revalidated, ${m.failed} failed, ${m.bytes} bytes`
    : '';
  return (
    `run ${summary.runId} succeeded: ${summary.entries} entries on ${summary.pages} pages; ` +
    `${c.added} added, ${c.changed} changed, ${c.removed} removed, ${c.returned} returned, ${c.unchanged} unchanged` +
    `${media} (${(summary.durationMs / 1000).toFixed(1)} s)`
  );
}

/**
 * `sync`: one run. The summary is the command's output and goes to stdout; log lines and the
 * progress bar go to stderr, so `sync | jq`-style pipes and `sync > summary.txt` get only the summary.
 * Exit 0 only on success.
 */
export async function runSyncCommand(
  config: Config,
  options: { rebind: boolean; upstreamLabel?: string },
): Promise<number> {
  if (!config.upstream) {
    process.stderr.write(
      'coworker-mirror: sync needs an upstream: pass --upstream URL or set UPSTREAM_URL (e.g. https://example.com)\n',
    );
    return EXIT.usage;
  }
  const target = options.upstreamLabel
    ? { ...config.upstream, label: options.upstreamLabel }
    : config.upstream;
  const tty = process.stderr.isTTY === true;
  // On a terminal the bar shows progress, so only warnings and errors are logged beside it.
  const base = createLogger({
    level: tty ? 'warn' : config.logLevel,
    pretty: false,
    destination: process.stderr,
  });
  // The demo's syncs (children of `start`) say so on every line, as `start` does.
  const logger = options.upstreamLabel === DEMO_UPSTREAM_LABEL ? base.child({ mode: 'demo' }) : base;
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
    const reboundFrom = checkUpstreamBinding(store, target.label, options);
    let started = false;
    const summary = await runSync(syncSettingsFrom(config, target.url, target), {
      store,
      logger,
      signal: controller.signal,
      onRunStarted: (runId) => {
        if (reboundFrom !== null) recordRebind(store, runId, reboundFrom);
        // Under `start`, the parent learns the run id (the admin route answers with it) and the error.
        reportToParent(process.send?.bind(process), { type: 'run-started', runId });
      },
      onProgress: (done, total) => {
        if (!bar) return;
        if (!started) bar.start(total, 0);
        started = true;
        bar.setTotal(total);
        bar.update(done);
      },
    });
    bar?.stop();
    // Under `start` the parent logs the run; its stdout is the parent's log stream, JSON lines only.
    if (!process.send) process.stdout.write(`${summaryLine(summary)}\n`);
    return EXIT.ok;
  } catch (thrown) {
    bar?.stop();
    const error = thrown instanceof MirrorError ? thrown : toMirrorError(thrown);
    const { code, message, details } = error;
    reportToParent(process.send?.bind(process), { type: 'run-failed', code, message, details });
    const runId = typeof error.details.runId === 'number' ? ` (run ${error.details.runId})` : '';
    process.stderr.write(`coworker-mirror: sync failed${runId} [${error.code}]: ${error.message}\n`);
    return exitCodeFor(error.code);
  } finally {
    // Success or failure, what the run put in the outbox goes out now, within a bounded wait;
    // under `start` (an IPC channel to it) its own delivery worker sends them.
    if (!process.send) {
      await deliverAfterSync(store, config, logger).catch((error: unknown) =>
        logger.error({ err: error }, 'webhook delivery after the sync failed; deliveries stay pending'),
      );
    }
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    store.close();
  }
}
