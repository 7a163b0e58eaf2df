import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { describePostgres, usePostgres } from '../helpers/postgres.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { hostFiles, mediaHost, objectsIn, sha256 } from '../media/harness.js';

beforeAll(() => ensureBuilt());

/** Each media file of the upstream's listing as a `serve` of the database answers it. */
async function servedBy(
  env: Record<string, string>,
  cwd: string,
  files: Map<string, Buffer>,
): Promise<{ url: string; status: number; same: boolean }[]> {
  const serve = runCli(['serve', '--port', '0'], env, cwd);
  const base = (JSON.parse(await serve.waitFor(/"msg":"serving the mirror"/)) as { url: string }).url;
  const answers = [];
  for (const [url, bytes] of files) {
    const res = await fetch(`${base}/media/${sha256(bytes)}/${url.split('/').at(-1)}`);
    answers.push({ url, status: res.status, same: Buffer.from(await res.arrayBuffer()).equals(bytes) });
  }
  serve.child.kill('SIGTERM');
  expect((await serve.exited).code).toBe(0);
  return answers;
}

const allServed = (files: Map<string, Buffer>) =>
  [...files.keys()].map((url) => ({ url, status: 200, same: true }));

describe('a media folder of another database, from the CLI', () => {
  it('`sync` and `start` refuse it with exit 2, naming MEDIA_DIR and the fix; nothing in it changes', async () => {
    const host = await mediaHost();
    const upstream = await simulatedUpstream({ seed: 7, count: 6, mediaBaseUrl: host.mediaBaseUrl });
    const folder = tempDir();
    const dir = join(folder, 'shared-media');
    const env = { MEDIA_ORIGINS: host.url, MEDIA_DIR: dir, MEDIA_TIMEOUT: '5s' };
    const first = runCli(['sync', '--upstream', upstream.url, '--db', join(folder, 'first.db')], env);
    expect((await first.exited).code).toBe(0);
    const before = objectsIn(dir);
    expect(before.length).toBeGreaterThan(0);

    const second = join(folder, 'second.db');
    const sync = runCli(['sync', '--upstream', upstream.url, '--db', second], env);
    expect((await sync.exited).code).toBe(2);
    expect(sync.output()).toMatch(
      new RegExp(
        `^coworker-mirror: sync failed \\[MEDIA_DIR_FOREIGN\\]: MEDIA_DIR: the media folder ${dir} belongs to another database \\(${join(folder, 'first.db')}, mirror id [0-9a-f-]{36}\\), not to ${second} .*set MEDIA_DIR to a new or empty folder`,
        'm',
      ),
    );
    const start = runCli(['start', '--db', second, '--port', '0'], { ...env, UPSTREAM_URL: upstream.url });
    expect((await start.exited).code).toBe(2);
    expect(start.output()).toContain(
      `coworker-mirror: MEDIA_DIR: the media folder ${dir} belongs to another database`,
    );
    expect(objectsIn(dir)).toEqual(before);
  });
});

// The default folders, as a real install makes them: one working directory, the default SQLite file
// (./data/mirror.db) and two PostgreSQL databases, each synced in turn and then served on its own.
describePostgres('databases in one working directory with default media folders', () => {
  const pg = usePostgres();

  it('each keeps its own files: after all three synced, each serves every file it recorded and its folder still holds them', async () => {
    const host = await mediaHost();
    const cwd = tempDir();
    const [one, two] = [await pg.server.createDatabase(), await pg.server.createDatabase()];
    const databases: { env: Record<string, string>; upstream: SimulatedUpstream }[] = [
      {
        env: { DATABASE_URL: pg.server.url(one) },
        upstream: await simulatedUpstream({ seed: 7, count: 8, mediaBaseUrl: host.mediaBaseUrl }),
      },
      { env: {}, upstream: await simulatedUpstream({ seed: 8, count: 8, mediaBaseUrl: host.mediaBaseUrl }) },
      {
        env: { DATABASE_URL: pg.server.url(two) },
        upstream: await simulatedUpstream({ seed: 9, count: 8, mediaBaseUrl: host.mediaBaseUrl }),
      },
    ];
    const files = databases.map((db) => hostFiles(db.upstream, host));
    for (const db of databases) {
      const sync = runCli(
        ['sync', '--upstream', db.upstream.url],
        { ...db.env, MEDIA_ORIGINS: host.url, MEDIA_TIMEOUT: '5s' },
        cwd,
      );
      expect({ code: (await sync.exited).code, output: sync.output() }).toMatchObject({ code: 0 });
    }
    await host.close();

    for (const [i, db] of databases.entries()) {
      const own = files[i] ?? new Map<string, Buffer>();
      expect(await servedBy(db.env, cwd, own)).toEqual(allServed(own));
    }
    const { port } = new URL(pg.server.url(one));
    const folders = [`${one}@127.0.0.1-${port}.media`, 'mirror.db.media', `${two}@127.0.0.1-${port}.media`];
    expect(
      readdirSync(join(cwd, 'data'))
        .filter((name) => name.endsWith('.media'))
        .sort(),
    ).toEqual([...folders].sort());
    for (const [i, folder] of folders.entries()) {
      const shas = [...new Set([...(files[i]?.values() ?? [])].map((bytes) => sha256(bytes)))].sort();
      expect(objectsIn(join(cwd, 'data', folder))).toEqual(shas);
    }
  });
});
