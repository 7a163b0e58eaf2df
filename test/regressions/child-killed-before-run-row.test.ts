import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { MirrorError } from '../../src/errors.js';
import { runView } from '../../src/views/history-views.js';
import { silentLogger } from '../../src/logger.js';
import { runIsolatedSync, type IsolatedSyncOptions } from '../../src/sync/isolated-sync.js';
import { tempDir } from '../helpers/temp-db.js';

function options(dir: string, script: string): IsolatedSyncOptions {
  const cliPath = join(dir, 'child.mjs');
  writeFileSync(cliPath, script);
  const store = openDatabase(join(dir, 'mirror.db'));
  onTestFinished(() => store.close());
  return {
    execPath: process.execPath,
    nodeArgs: [],
    cliPath,
    env: { PATH: process.env.PATH ?? '' },
    maxHeapMb: 64,
    maxDurationMs: 60_000,
    store,
    upstream: 'https://example.com',
    start: { trigger: 'schedule', scheduledFor: '2026-11-20T09:00:00.000Z' },
    logger: silentLogger(),
    logFormat: 'json',
    stdout: new PassThrough().resume(),
    stderr: new PassThrough().resume(),
  };
}

// Regression: a sync child of `start` killed before it wrote its run row left no trace in `runs`,
// `/runs/` or the API, only a log line. Its death is now a failed run.
describe('a sync child that dies before its run row', () => {
  it('killed at start-up: one failed run, SYNC_CRASHED, with the reason', async () => {
    const opts = options(tempDir(), "process.kill(process.pid, 'SIGKILL');\n");
    const error = await runIsolatedSync(opts, new AbortController().signal, () => undefined).then(
      () => expect.fail('a killed child resolved'),
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(MirrorError);
    const message = 'the sync process (signal SIGKILL) crashed; nothing was stored';
    expect(error).toMatchObject({ code: 'SYNC_CRASHED', message, details: { runId: 1 } });
    const [run, ...others] = (await opts.store.listRuns({ limit: 10 })).map((r) => runView(r));
    expect(others).toEqual([]);
    expect(run).toMatchObject({
      id: 1,
      status: 'failed',
      upstream: 'https://example.com',
      entries: null,
      error: { code: 'SYNC_CRASHED', message },
      // What started it is kept; the tick is not claimed: the run never served it, another may.
      trigger: 'schedule',
      scheduled_for: null,
    });
    expect(run?.finished_at).not.toBeNull();
  });

  it('stopped by a shutdown before its run began: nothing to record', async () => {
    const opts = options(tempDir(), 'setInterval(() => undefined, 1000);\n');
    const abort = new AbortController();
    abort.abort();
    await expect(runIsolatedSync(opts, abort.signal, () => undefined)).rejects.toMatchObject({
      code: 'RUN_ABORTED',
    });
    expect(await opts.store.listRuns({ limit: 10 })).toEqual([]);
  });
});
