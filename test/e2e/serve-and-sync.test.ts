import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { WAIT_MS } from '../helpers/patience.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { cliDatabases, STORE_KINDS } from '../helpers/postgres.js';

beforeAll(() => ensureBuilt());

describe.each(STORE_KINDS)('serve and sync as separate processes on one database on %s', (kind) => {
  const database = cliDatabases(kind);

  it('serve picks up what a sync in another process commits, without a restart', async () => {
    const db = (await database()).arg;
    const upstream = await simulatedUpstream({ seed: 21, count: 20 });
    // serve reads an existing SQLite file only (a mistyped --db must not create one): an empty one.
    if (kind === 'sqlite') openDatabase(db).close();
    const serve = runCli(['serve', '--db', db, '--port', '0'], { SNAPSHOT_POLL: '100ms' });
    const url = (JSON.parse(await serve.waitFor(/"msg":"serving the mirror"/)) as { url: string }).url;
    expect((await fetch(`${url}${LIST_PATH}`)).status).toBe(503);

    const first = runCli(['sync', '--upstream', upstream.url, '--db', db], {});
    expect((await first.exited).code).toBe(0);
    expect(first.output()).toMatch(/run 1 succeeded: 20 entries on 3 pages; 20 added, 0 changed/);
    const count = await eventually(
      async () => {
        const res = await fetch(`${url}${LIST_PATH}`);
        return res.status === 200 ? ((await res.json()) as { count: number }).count : undefined;
      },
      WAIT_MS,
      'the first snapshot',
    );
    expect(count).toBe(20);

    upstream.data.add(3);
    const second = runCli(['sync', '--upstream', upstream.url, '--db', db], {});
    expect((await second.exited).code).toBe(0);
    await eventually(
      async () => {
        const res = await fetch(`${url}${LIST_PATH}`);
        return ((await res.json()) as { count: number }).count === 23 ? true : undefined;
      },
      WAIT_MS,
      'the second snapshot',
    );

    const changes = runCli(['changes', '--db', db, '--kind', 'added', '--since', '1h', '--json'], {});
    expect((await changes.exited).code).toBe(0);
    const lines = changes
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { run: number; kind: string });
    expect(lines.filter((l) => l.run === 2)).toHaveLength(3);

    const history = runCli(['history', 'z'.repeat(32), '--db', db], {});
    expect((await history.exited).code).toBe(7);

    serve.child.kill('SIGTERM');
    expect((await serve.exited).code).toBe(0);
  });
});

describe('sync flags', () => {
  it('sync without an upstream, or with a bad one, exits 2 naming the flag', async () => {
    const db = join(tempDir(), 'mirror.db');
    const none = runCli(['sync', '--db', db], {});
    expect((await none.exited).code).toBe(2);
    expect(none.output()).toMatch(/--upstream URL or set UPSTREAM_URL/);
    const bad = runCli(['sync', '--db', db, '--upstream', 'ftp://x'], {});
    expect((await bad.exited).code).toBe(2);
    expect(bad.output()).toMatch(/--upstream: expected an absolute http\(s\) URL/);
  });
});
