import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { MirrorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { beginRun } from '../../src/sync/run-lock.js';
import { runIsolatedSync, type IsolatedSyncOptions } from '../../src/sync/isolated-sync.js';
import type { Store } from '../../src/db/store.js';
import { BUILT_CLI, ensureBuilt } from '../helpers/process.js';
import { tableRows, tempDir } from '../helpers/temp-db.js';
import { makeEntries, makeEntry, startFakeDrf } from '../upstream/fake-drf.js';

beforeAll(() => ensureBuilt());

/**
 * A sync child of the built CLI against `upstream` and the SQLite file `databasePath`, its output
 * discarded; `env` and `options` add to or override what every test here hands it.
 */
function isolatedSync(
  target: { upstream: string; databasePath: string; store: Store },
  options: Partial<IsolatedSyncOptions> & Pick<IsolatedSyncOptions, 'maxHeapMb' | 'maxDurationMs'>,
  env: Record<string, string> = {},
  onRunStarted: (runId: number) => void = () => undefined,
): Promise<void> {
  return runIsolatedSync(
    {
      execPath: process.execPath,
      nodeArgs: [],
      cliPath: BUILT_CLI,
      env: {
        PATH: process.env.PATH ?? '',
        UPSTREAM_URL: target.upstream,
        DATABASE_PATH: target.databasePath,
        LOG_LEVEL: 'warn',
        ...env,
      },
      store: target.store,
      upstream: target.upstream,
      logger: silentLogger(),
      logFormat: 'json',
      stdout: new PassThrough().resume(),
      stderr: new PassThrough().resume(),
      ...options,
    },
    new AbortController().signal,
    onRunStarted,
  );
}

describe('start runs each sync in its own process', () => {
  it('regression: a sync that blows its heap dies alone; the run is failed with the reason, the lock freed, and the next run succeeds', async () => {
    // 800 entries of ~100 KB: ~80 MB of entry text, more than a 64 MiB heap holds. The caps a
    // config accepts agree with its heap (a listing within them fits), so the parent is handed the
    // small heap directly: what is tested is what happens when an estimate proves wrong.
    const big = Array.from({ length: 800 }, (_, i) => makeEntry(i, { bio: 'x'.repeat(100_000) }));
    const upstream = await startFakeDrf({ entries: big });
    onTestFinished(() => upstream.close());
    const databasePath = join(tempDir(), 'mirror.db');
    const store = openDatabase(databasePath);
    onTestFinished(() => store.close());
    const sync = (maxHeapMb: number) =>
      isolatedSync(
        { upstream: upstream.baseUrl, databasePath, store },
        { maxHeapMb, maxDurationMs: 600_000 },
      );

    const error = await sync(64).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(MirrorError);
    expect(error).toMatchObject({ code: 'SYNC_CRASHED' });
    expect((error as MirrorError).message).toMatch(
      /^the sync process \(.+\) ran out of its 64 MiB heap \(SYNC_MAX_HEAP_MB\)/,
    );
    const failed = await store.listRuns({ limit: 10 });
    expect(failed.map((r) => [r.status, r.errorCode])).toEqual([['failed', 'SYNC_CRASHED']]);
    expect(tableRows(store, 'coworkers')).toEqual([]);

    upstream.entries.splice(0, upstream.entries.length, ...makeEntries(12));
    await sync(256);
    const [latest] = await store.listRuns({ limit: 1 });
    expect(latest).toMatchObject({ status: 'succeeded', entries: 12 });
  });

  it('regression: a sync process stuck on an upstream that drips bytes forever is killed by the watchdog; the run is failed SYNC_TIMEOUT and the lock released', async () => {
    // The upstream answers every request with headers and then a space every 50 ms, never ending.
    const upstream = await startFakeDrf({
      intercept: (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(timer));
        return true;
      },
    });
    onTestFinished(() => upstream.close());
    const databasePath = join(tempDir(), 'mirror.db');
    const store = openDatabase(databasePath);
    onTestFinished(() => store.close());
    const runsStarted: number[] = [];

    const run = isolatedSync(
      { upstream: upstream.baseUrl, databasePath, store },
      {
        maxHeapMb: 256,
        // Long enough for the child to start, take the lock and reach the upstream on a loaded
        // machine (3 s was not, at load 13: the child was killed before its first request).
        maxDurationMs: 10_000,
        watchdogGraceMs: 1_000,
      },
      // The child's own deadlines are far off: it stands for a child too stuck to honour them.
      { SYNC_MAX_DURATION: '10m', UPSTREAM_REQUEST_DEADLINE: '10m' },
      (runId) => runsStarted.push(runId),
    );
    const error = await run.then(
      () => expect.fail('the stuck sync resolved'),
      (thrown: unknown) => thrown,
    );

    expect(upstream.requests.length).toBeGreaterThan(0);
    expect(runsStarted).toEqual([1]);
    expect(error).toBeInstanceOf(MirrorError);
    expect(error).toMatchObject({
      code: 'SYNC_TIMEOUT',
      message:
        'the sync process (signal SIGKILL) did not end within 11 s (SYNC_MAX_DURATION and a grace) and was killed; nothing was stored',
      details: { exitCode: null, signal: 'SIGKILL', maxHeapMb: 256 },
    });
    expect(
      tableRows(
        store,
        'runs',
        'id, status, error_code, error_message, pages, entries, finished_at is not null as finished',
      ),
    ).toEqual([
      {
        id: 1,
        status: 'failed',
        error_code: 'SYNC_TIMEOUT',
        error_message: (error as MirrorError).message,
        pages: null,
        entries: null,
        finished: 1,
      },
    ]);
    expect(tableRows(store, 'coworkers')).toEqual([]);
    // The lock is free: the next run takes it.
    expect((await beginRun(store, upstream.baseUrl)).id).toBe(2);
  });
});
