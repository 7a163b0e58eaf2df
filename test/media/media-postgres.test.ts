import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { openPgStore, type PgStore } from '../../src/db/postgres/store.js';
import { silentLogger } from '../../src/logger.js';
import { BlobCache } from '../../src/media/blob-cache.js';
import { startSimulatedMediaHost, startSimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { describePostgres, pgTarget, usePostgres } from '../helpers/postgres.js';
import { eventually } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';
import { listedMediaUrls, objectPath, sha256 } from './harness.js';

const CHUNK = 256 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function readAll(stream: AsyncIterable<Buffer> | null): Promise<Buffer | null> {
  if (stream === null) return null;
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

describePostgres('media on PostgreSQL', () => {
  const pg = usePostgres();

  async function instance(url: string): Promise<PgStore> {
    const store = await openPgStore(pgTarget(url), { poolMax: 4 });
    onTestFinished(() => store.close());
    return store;
  }

  it('putBlob and openBlob: chunked bytes read back exactly for any span, once per sha256; unreferenced bytes are collected', async () => {
    const store = await instance(pg.server.url(await pg.server.createDatabase()));
    const dir = tempDir();
    const bytes = randomBytes(2 * CHUNK + 1234);
    const sha = sha256(bytes);
    writeFileSync(join(dir, 'big'), bytes);
    writeFileSync(join(dir, 'empty'), Buffer.alloc(0));
    expect(await store.putBlob(sha, join(dir, 'big'))).toBe(true);
    expect(await store.putBlob(sha, join(dir, 'big'))).toBe(false);
    expect(await store.putBlob(sha256(Buffer.alloc(0)), join(dir, 'empty'))).toBe(true);
    const spans = [
      [0, bytes.length - 1],
      [0, 0],
      [CHUNK - 10, CHUNK + 10],
      [CHUNK, 2 * CHUNK - 1],
      [100, 2 * CHUNK + 5],
      [bytes.length - 1, bytes.length - 1],
    ] as const;
    for (const [start, end] of spans) {
      // .equals, not toEqual: a deep comparison of half a megabyte takes vitest seconds.
      const got = await readAll(await store.openBlob(sha, { start, end }));
      expect(got?.equals(bytes.subarray(start, end + 1)), `${start}-${end}`).toBe(true);
    }
    expect(await readAll(await store.openBlob(sha256(Buffer.alloc(0)), { start: 0, end: -1 }))).toEqual(
      Buffer.alloc(0),
    );
    expect(await store.openBlob('0'.repeat(64), { start: 0, end: 0 })).toBeNull();
    // No media_blobs row names them (as after a killed run): the run's collection deletes them.
    expect(await store.dropUnreferencedBlobs()).toBe(2);
    expect(await store.openBlob(sha, { start: 0, end: 0 })).toBeNull();
  });

  it('two instances, separate empty media folders: after a sync on A, B serves every file byte-exact, with Range, while the media host is down', async () => {
    const url = pg.server.url(await pg.server.createDatabase());
    const host = await startSimulatedMediaHost();
    let hostUp = true;
    onTestFinished(() => (hostUp ? host.close() : undefined));
    const upstream = await startSimulatedUpstream({ seed: 7, count: 12, mediaBaseUrl: host.mediaBaseUrl });
    onTestFinished(() => upstream.close());
    const urls = listedMediaUrls(upstream, host);
    // One file spans several chunks, so ranges cross chunk boundaries.
    const big = urls.find((u) => u.endsWith('.png')) ?? '';
    host.override(big, {
      bytes: Buffer.concat([PNG_SIGNATURE, randomBytes(3 * CHUNK)]),
      contentType: 'image/png',
    });
    const files = new Map(urls.map((u) => [u, host.fileAt(u)?.bytes ?? Buffer.alloc(0)]));

    const a = await instance(url);
    const dirA = join(tempDir(), 'media');
    const config = syncConfig(upstream.url, {
      MEDIA_ORIGINS: host.url,
      MEDIA_DIR: dirA,
      MEDIA_MAX_BYTES: String(10 * 1024 * 1024),
      MEDIA_RUN_MAX_BYTES: String(100 * 1024 * 1024),
      MEDIA_TIMEOUT: '5s',
    });
    const summary = await runSync(config, { store: a, logger: silentLogger() });
    expect(summary.media).toMatchObject({ fetched: files.size, failed: 0 });
    hostUp = false;
    await host.close();

    const b = await instance(url);
    const dirB = join(tempDir(), 'media');
    // B starts with nothing on disk: every byte it serves comes from the database (which the local
    // snapshot's keeper may copy into B's folder as soon as B serves; the host is down).
    expect(existsSync(dirB)).toBe(false);
    const mirror = await startMirror(b, { media: { dir: dirB, rewrite: false } });
    expect((await get(`${mirror.url}/readyz`)).status).toBe(200);
    for (const [mediaUrl, bytes] of files) {
      const path = `${mirror.url}/media/${sha256(bytes)}/${mediaUrl.split('/').at(-1)}`;
      const whole = await get(path);
      expect({ url: mediaUrl, status: whole.status, same: whole.body.equals(bytes) }).toEqual({
        url: mediaUrl,
        status: 200,
        same: true,
      });
      const start = Math.floor(bytes.length / 3);
      const end = Math.min(bytes.length - 1, start + CHUNK + 17);
      const part = await get(path, { range: `bytes=${start}-${end}` });
      expect({
        status: part.status,
        range: part.headers['content-range'],
        same: part.body.equals(bytes.subarray(start, end + 1)),
      }).toEqual({
        status: 206,
        range: `bytes ${start}-${end}/${bytes.length}`,
        same: true,
      });
    }
    expect(files.get(big)?.length).toBeGreaterThan(3 * CHUNK);
  });

  it('a kept file whose bytes the database lacks (mirrored before it held them) is a 503 on an instance without it, never a cut 200, until the instance that has it copies it in', async () => {
    const database = await pg.server.createDatabase();
    const url = pg.server.url(database);
    const host = await startSimulatedMediaHost();
    onTestFinished(() => host.close());
    const upstream = await startSimulatedUpstream({ seed: 7, count: 4, mediaBaseUrl: host.mediaBaseUrl });
    onTestFinished(() => upstream.close());
    const a = await instance(url);
    const env = { MEDIA_ORIGINS: host.url, MEDIA_DIR: join(tempDir(), 'media'), MEDIA_TIMEOUT: '5s' };
    await runSync(syncConfig(upstream.url, env), { store: a, logger: silentLogger() });
    const mediaUrl = listedMediaUrls(upstream, host)[0] ?? '';
    const sha = sha256(host.fileAt(mediaUrl)?.bytes ?? Buffer.alloc(0));
    await pg.server.admin(database).query('delete from media_blob_chunks where sha256 = $1', [sha]);
    const b = await instance(url);
    const mirror = await startMirror(b, { media: { dir: join(tempDir(), 'media'), rewrite: false } });
    const fileUrl = `${mirror.url}/media/${sha}/${mediaUrl.split('/').at(-1)}`;
    const res = await get(fileUrl);
    expect({ status: res.status, cache: res.headers['cache-control'] }).toEqual({
      status: 503,
      cache: 'no-store',
    });
    // The next run on the instance whose folder has the file copies it in: B serves it.
    await runSync(syncConfig(upstream.url, env), { store: a, logger: silentLogger() });
    const again = await get(fileUrl);
    expect({
      status: again.status,
      same: again.body.equals(host.fileAt(mediaUrl)?.bytes ?? Buffer.alloc(1)),
    }).toEqual({
      status: 200,
      same: true,
    });
  });

  it("MEDIA_RETENTION deletes a dropped file's bytes from the database with its row; the current file stays", async () => {
    const host = await startSimulatedMediaHost();
    onTestFinished(() => host.close());
    const upstream = await startSimulatedUpstream({ seed: 7, count: 4, mediaBaseUrl: host.mediaBaseUrl });
    onTestFinished(() => upstream.close());
    const store = await instance(pg.server.url(await pg.server.createDatabase()));
    const env = { MEDIA_ORIGINS: host.url, MEDIA_DIR: join(tempDir(), 'media'), MEDIA_TIMEOUT: '5s' };
    const mediaUrl = listedMediaUrls(upstream, host).find((u) => u.endsWith('.png')) ?? '';
    const before = sha256(host.fileAt(mediaUrl)?.bytes ?? Buffer.alloc(0));
    await runSync(syncConfig(upstream.url, env), { store, logger: silentLogger() });
    host.bump(mediaUrl);
    const after = sha256(host.fileAt(mediaUrl)?.bytes ?? Buffer.alloc(0));
    await runSync(syncConfig(upstream.url, env), { store, logger: silentLogger() });
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await store.dropMediaUnusedSince(future)).toEqual([before]);
    expect(await store.openBlob(before, { start: 0, end: 0 })).toBeNull();
    expect(await store.openBlob(after, { start: 0, end: 0 })).not.toBeNull();
  });

  it('a file retention drops leaves the media folder of every instance that cached it; the current file stays', async () => {
    const url = pg.server.url(await pg.server.createDatabase());
    const host = await startSimulatedMediaHost();
    onTestFinished(() => host.close());
    const upstream = await startSimulatedUpstream({ seed: 7, count: 4, mediaBaseUrl: host.mediaBaseUrl });
    onTestFinished(() => upstream.close());
    const a = await instance(url);
    const env = { MEDIA_ORIGINS: host.url, MEDIA_DIR: join(tempDir(), 'media'), MEDIA_TIMEOUT: '5s' };
    const mediaUrl = listedMediaUrls(upstream, host).find((u) => u.endsWith('.png')) ?? '';
    const name = mediaUrl.split('/').at(-1) ?? '';
    const before = sha256(host.fileAt(mediaUrl)?.bytes ?? Buffer.alloc(0));
    await runSync(syncConfig(upstream.url, env), { store: a, logger: silentLogger() });
    host.bump(mediaUrl);
    const after = sha256(host.fileAt(mediaUrl)?.bytes ?? Buffer.alloc(0));
    await runSync(syncConfig(upstream.url, env), { store: a, logger: silentLogger() });
    // Instance B serves both files once, which copies them into its own folder.
    const dirB = join(tempDir(), 'media');
    const mirror = await startMirror(await instance(url), { media: { dir: dirB, rewrite: false } });
    for (const sha of [before, after]) {
      expect((await get(`${mirror.url}/media/${sha}/${name}`)).status).toBe(200);
      await eventually(() => (existsSync(objectPath(dirB, sha)) ? true : undefined), 10_000, `${sha} cached`);
    }

    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await a.dropMediaUnusedSince(future)).toEqual([before]);

    await eventually(
      () => (existsSync(objectPath(dirB, before)) ? undefined : true),
      10_000,
      'the copy deleted',
    );
    expect(existsSync(objectPath(dirB, after))).toBe(true);
    expect((await get(`${mirror.url}/media/${before}/${name}`)).status).toBe(404);
  });

  it("fills an instance's media folder from the database: the complete file under its hash", async () => {
    const store = await instance(pg.server.url(await pg.server.createDatabase()));
    const dir = tempDir();
    const bytes = randomBytes(CHUNK + 99);
    const sha = sha256(bytes);
    writeFileSync(join(dir, 'file'), bytes);
    await store.putBlob(sha, join(dir, 'file'));
    const media = join(dir, 'media');
    const cache = new BlobCache({ dir: media }, store, silentLogger());
    await Promise.all([cache.fill(sha, bytes.length), cache.fill(sha, bytes.length)]);
    expect(readFileSync(objectPath(media, sha)).equals(bytes)).toBe(true);
  });
});
