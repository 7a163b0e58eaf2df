import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';
import { makeEntries, makeEntry, startFakeDrf } from '../upstream/fake-drf.js';

beforeAll(() => ensureBuilt(), 120_000);

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
      60_000,
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
      60_000,
      'a later run that succeeds',
    );
    expect(ok.entries).toBe(12);
    await eventually(
      async () => ((await fetch(`${url}${LIST_PATH}`)).status === 200 ? true : undefined),
      10_000,
      'the snapshot served',
    );
    expect((await runs()).filter((r) => r.status === 'running')).toEqual([]);
    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);
  });
});
