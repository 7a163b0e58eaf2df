import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { MirrorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { beginRun } from '../../src/sync/run-lock.js';
import { runIsolatedSync } from '../../src/sync/isolated-sync.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { BUILT_CLI, ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { WAIT_MS } from '../helpers/patience.js';
import { tableRows, tempDir } from '../helpers/temp-db.js';
import { makeEntries, makeEntry, startFakeDrf } from '../upstream/fake-drf.js';

beforeAll(() => ensureBuilt());

interface RunJson {
  id: number;
  status: string;
  entries: number | null;
  error: { code: string; message: string } | null;
}

describe('start runs each sync in its own process', () => {
  it('regression: a sync that blows its heap dies alone; the server answers, the run is failed with the reason, the next tick succeeds', async () => {
    // 800 entries of ~100 KB: ~80 MB of entry text, more than a 64 MiB heap holds.
    const big = Array.from({ length: 800 }, (_, i) => makeEntry(i, { bio: 'x'.repeat(100_000) }));
    const upstream = await startFakeDrf({ entries: big });
    onTestFinished(() => upstream.close());
    const proc = runCli(['start', '--port', '0'], {
      UPSTREAM_URL: upstream.baseUrl,
      DATABASE_PATH: join(tempDir(), 'mirror.db'),
      SYNC_CRON: '*/2 * * * * *',
      SYNC_MAX_HEAP_MB: '64',
      SNAPSHOT_POLL: '100ms',
      LOG_LEVEL: 'info',
    });
    const line = await proc.waitFor(/"msg":"coworker-mirror started"/);
    const url = (JSON.parse(line) as { url: string }).url;
    const runs = async () =>
      ((await (await fetch(`${url}/api/mirror/runs/`)).json()) as { results: RunJson[] }).results;

    const failed = await eventually(
      async () => (await runs()).find((r) => r.status === 'failed'),
      WAIT_MS,
      'the run whose process ran out of heap',
    );
    expect(failed.error?.code).toBe('SYNC_CRASHED');
    expect(failed.error?.message).toMatch(
      /^the sync process \(.+\) ran out of its 64 MiB heap \(SYNC_MAX_HEAP_MB\)/,
    );
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(proc.child.exitCode).toBeNull();

    upstream.entries.splice(0, upstream.entries.length, ...makeEntries(12));
    const ok = await eventually(
      async () => (await runs()).find((r) => r.status === 'succeeded'),
      WAIT_MS,
      'a later run that succeeds',
    );
    expect(ok.entries).toBe(12);
    await eventually(
      async () => ((await fetch(`${url}${LIST_PATH}`)).status === 200 ? true : undefined),
      WAIT_MS,
      'the snapshot served',
    );
    expect((await runs()).filter((r) => r.status === 'running')).toEqual([]);
    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);
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

    const run = runIsolatedSync(
      {
        execPath: process.execPath,
        nodeArgs: [],
        cliPath: BUILT_CLI,
        // The child's own deadlines are far off: it stands for a child too stuck to honour them.
        env: {
          PATH: process.env.PATH ?? '',
          UPSTREAM_URL: upstream.baseUrl,
          DATABASE_PATH: databasePath,
          SYNC_MAX_DURATION: '10m',
          UPSTREAM_REQUEST_DEADLINE: '10m',
          LOG_LEVEL: 'warn',
        },
        maxHeapMb: 256,
        // Long enough for the child to start, take the lock and reach the upstream on a loaded
        // machine (3 s was not, at load 13: the child was killed before its first request).
        maxDurationMs: 10_000,
        watchdogGraceMs: 1_000,
        store,
        upstream: upstream.baseUrl,
        logger: silentLogger(),
        stdout: new PassThrough().resume(),
        stderr: new PassThrough().resume(),
      },
      new AbortController().signal,
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
