import type { RunStart } from '../db/store.js';
import type { Config } from '../config/load-config.js';
import { silentLogger } from '../logger.js';
import { superviseSync } from '../sync/isolated-sync.js';
import { Writable } from 'node:stream';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { visibleLines } from './terminal.js';

/**
 * `sync` as a person or cron starts it: the run itself goes on in a child process with
 * SYNC_MAX_HEAP_MB as its heap limit and a watchdog past SYNC_MAX_DURATION, as each sync of
 * `start` does (src/sync/isolated-sync.ts). This process checks the settings, waits, passes
 * SIGINT/SIGTERM on, and answers with the run's exit code. The child writes the summary to this
 * stdout and its failure line to this stderr; a child that died (out of heap, killed, stuck past
 * the watchdog) cannot, so its run is ended here and the line is written here.
 */
export async function superviseSyncCommand(
  config: Config,
  options: { args: readonly string[]; start: RunStart; upstreamLabel?: string },
): Promise<number> {
  const target = config.upstream.target;
  if (!target) {
    process.stderr.write(
      'coworker-mirror: sync needs an upstream: pass --upstream URL or set UPSTREAM_URL (e.g. https://example.com)\n',
    );
    return EXIT.usage;
  }
  const script = process.argv[1];
  if (script === undefined) throw new Error('no CLI script in process.argv');
  const stderr = withoutFatalReport(process.stderr);
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => controller.abort(new Error(`received ${signal}`));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const end = await superviseSync(
      {
        execPath: process.execPath,
        nodeArgs: process.execArgv,
        cliPath: script,
        syncArgs: options.args,
        start: options.start,
        env: process.env,
        maxHeapMb: config.sync.maxHeapMb,
        maxDurationMs: config.sync.maxDurationMs,
        // Opened only to record a child that died: this process holds no connection while it waits.
        store: {
          file: config.database.target.kind === 'sqlite' ? config.database.target.path : '',
          open: async () => {
            const { openStore } = await import('../db/open-store.js');
            return openStore(config.database, { purpose: 'sync' });
          },
        },
        upstream: options.upstreamLabel ?? target.label,
        // The child's death is said in the CLI's one line below, as any failed sync is.
        logger: silentLogger(),
        stdout: 'inherit',
        stderr,
        terminal: process.stderr.isTTY === true,
      },
      controller.signal,
      () => undefined,
    );
    // What the child wrote last without a newline goes before the line below.
    await new Promise<void>((resolve) => stderr.end(resolve));
    if (end.error === null) return EXIT.ok;
    if (!end.reported) {
      const runId = typeof end.error.details.runId === 'number' ? ` (run ${end.error.details.runId})` : '';
      process.stderr.write(
        `coworker-mirror: sync failed${runId} [${end.error.code}]: ${visibleLines(end.error.message)}\n`,
      );
    }
    return exitCodeFor(end.error.code);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** Where V8's report of a fatal error (out of heap) starts: its last lines are for V8's developers. */
const FATAL_REPORT = /^(<--- Last few GCs --->|FATAL ERROR: )/;

/**
 * The child's stderr, line by line, up to V8's fatal report: the line written here says why the
 * sync died and what to change, once, as a cron job's mail should.
 */
function withoutFatalReport(destination: NodeJS.WritableStream): Writable {
  let pending = '';
  let fatal = false;
  const pass = (line: string) => {
    if (fatal || FATAL_REPORT.test(line)) fatal = true;
    else destination.write(line);
  };
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      pending += chunk.toString();
      for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
        pass(pending.slice(0, newline + 1));
        pending = pending.slice(newline + 1);
      }
      done();
    },
    final(done) {
      if (pending !== '') pass(pending);
      pending = '';
      done();
    },
  });
}
