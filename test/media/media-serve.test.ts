import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { resolveRange } from '../../src/http/media-route.js';
import { rewriteEntryText } from '../../src/http/media-rewrite.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { listedMediaUrls, mediaRig, sha256, type RigStore } from './harness.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw GET/HEAD with exactly these headers (fetch would add its own). */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
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

async function mirroredRig(store: RigStore) {
  const rig = await mediaRig({}, store);
  await rig.sync();
  const url = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.mp4'));
  if (!url) throw new Error('no mp4 in the listing');
  const bytes = rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0);
  const sha = sha256(bytes);
  const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: false } });
  return { rig, url, bytes, sha, mirror, fileUrl: `${mirror.url}/media/${sha}/${url.split('/').at(-1)}` };
}

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('GET /media/<sha256>/<name>', () => {
    it('serves the stored bytes with a strong ETag, immutable caching, the stored type and nosniff', async () => {
      const { bytes, sha, fileUrl } = await mirroredRig(await fresh());
      const res = await get(fileUrl);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(bytes);
      expect(res.headers).toMatchObject({
        etag: `"${sha}"`,
        'cache-control': 'public, max-age=31536000, immutable',
        'content-type': 'video/mp4',
        'x-content-type-options': 'nosniff',
        'accept-ranges': 'bytes',
        'content-length': String(bytes.length),
      });
      const head = await get(fileUrl, {}, 'HEAD');
      expect({ status: head.status, length: head.headers['content-length'], body: head.body.length }).toEqual(
        {
          status: 200,
          length: String(bytes.length),
          body: 0,
        },
      );
    });

    it('answers If-None-Match with 304', async () => {
      const { sha, fileUrl } = await mirroredRig(await fresh());
      for (const tag of [`"${sha}"`, `W/"${sha}"`, `"x", "${sha}"`, '*']) {
        const res = await get(fileUrl, { 'if-none-match': tag });
        expect({ tag, status: res.status, body: res.body.length }).toEqual({ tag, status: 304, body: 0 });
      }
      expect((await get(fileUrl, { 'if-none-match': '"other"' })).status).toBe(200);
    });

    it('answers single ranges with 206 and Content-Range, as <video> probes them', async () => {
      const { bytes, fileUrl } = await mirroredRig(await fresh());
      const size = bytes.length;
      const cases: [string, number, number][] = [
        ['bytes=0-1', 0, 1],
        ['bytes=100-', 100, size - 1],
        ['bytes=-50', size - 50, size - 1],
        [`bytes=10-${size + 1000}`, 10, size - 1],
      ];
      for (const [range, start, end] of cases) {
        const res = await get(fileUrl, { range });
        expect({ range, status: res.status, contentRange: res.headers['content-range'] }).toEqual({
          range,
          status: 206,
          contentRange: `bytes ${start}-${end}/${size}`,
        });
        expect(res.body).toEqual(bytes.subarray(start, end + 1));
      }
    });

    it('answers an unsatisfiable range with 416, and ignores several ranges or another unit', async () => {
      const { bytes, fileUrl } = await mirroredRig(await fresh());
      const res = await get(fileUrl, { range: `bytes=${bytes.length}-` });
      expect({ status: res.status, contentRange: res.headers['content-range'] }).toEqual({
        status: 416,
        contentRange: `bytes */${bytes.length}`,
      });
      expect((await get(fileUrl, { range: 'bytes=0-1,5-6' })).status).toBe(200);
      expect((await get(fileUrl, { range: 'items=0-1' })).status).toBe(200);
    });

    it('honours If-Range: the range for the same ETag, the whole file otherwise', async () => {
      const { bytes, sha, fileUrl } = await mirroredRig(await fresh());
      expect((await get(fileUrl, { range: 'bytes=0-9', 'if-range': `"${sha}"` })).status).toBe(206);
      const stale = await get(fileUrl, { range: 'bytes=0-9', 'if-range': '"older"' });
      expect({ status: stale.status, length: stale.body.length }).toEqual({
        status: 200,
        length: bytes.length,
      });
      const date = await get(fileUrl, { range: 'bytes=0-9', 'if-range': new Date().toUTCString() });
      expect(date.status).toBe(200);
    });

    it('answers an unknown hash exactly as any other unknown path (Django 404)', async () => {
      const { mirror } = await mirroredRig(await fresh());
      const unknown = await get(`${mirror.url}/media/${'0'.repeat(64)}/x.png`);
      const other = await get(`${mirror.url}/media/not-a-hash/x.png`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.toString().replace(/\/media\/\S+/g, '')).toBe(
        other.body.toString().replace(/\/media\/\S+/g, ''),
      );
    });
  });

  describe('MEDIA_REWRITE', () => {
    it('is off by default: the list endpoint is byte-identical with or without mirrored media', async () => {
      const { rig } = await mirroredRig(await fresh());
      const plain = await startMirror(rig.store);
      const withMedia = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: false } });
      for (const target of [LIST_PATH, `${LIST_PATH}?page=2`]) {
        const a = await get(`${plain.url}${target}`, { host: 'mirror.test' });
        const b = await get(`${withMedia.url}${target}`, { host: 'mirror.test' });
        expect(b.body.toString()).toBe(a.body.toString());
        expect(b.headers.etag).toBe(a.headers.etag);
      }
    });

    it("serves the mirror's absolute media URLs, built from Host or PUBLIC_BASE_URL; an item never mirrored keeps its URL", async () => {
      const rig = await mediaRig({}, await fresh());
      const urls = listedMediaUrls(rig.upstream, rig.host);
      const missing = urls[0] ?? '';
      rig.host.fail(missing, 404);
      await rig.sync();
      const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: true } });
      const body = JSON.parse(
        (await get(`${mirror.url}${LIST_PATH}`, { host: 'mirror.test:8080' })).body.toString(),
      ) as {
        results: unknown[];
      };
      const text = JSON.stringify(body.results);
      expect(text).toContain(JSON.stringify(missing));
      const onPage1 = urls.slice(1).filter((u) =>
        rig.upstream.data
          .entries()
          .slice(0, 8)
          .some((e) => JSON.stringify(e).includes(u)),
      );
      expect(onPage1.length).toBeGreaterThan(0);
      for (const url of onPage1) {
        expect(text).not.toContain(JSON.stringify(url));
        const sha = sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0));
        expect(text).toContain(`"http://mirror.test:8080/media/${sha}/${url.split('/').at(-1)}"`);
      }
      const fixed = await startMirror(rig.store, {
        media: { dir: rig.media.dir, rewrite: true },
        publicBaseUrl: 'https://mirror.example.org',
      });
      const fixedText = (await get(`${fixed.url}${LIST_PATH}`)).body.toString();
      expect(fixedText).toMatch(/"https:\/\/mirror\.example\.org\/media\/[0-9a-f]{64}\//);
    });

    it('?as_of= serves the media of that time', async () => {
      const rig = await mediaRig({ count: 4 }, await fresh());
      const first = await rig.sync();
      const url = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png')) ?? '';
      const oldSha = sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0));
      await new Promise((resolve) => setTimeout(resolve, 5));
      rig.host.bump(url);
      await rig.sync();
      const newSha = sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0));
      const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: true } });
      const firstAt = (await rig.store.getRun(first.runId))?.finishedAt ?? '';
      const past = (
        await get(`${mirror.url}${LIST_PATH}?as_of=${encodeURIComponent(firstAt)}`)
      ).body.toString();
      const now = (await get(`${mirror.url}${LIST_PATH}`)).body.toString();
      expect(past).toContain(`/media/${oldSha}/`);
      expect(past).not.toContain(`/media/${newSha}/`);
      expect(now).toContain(`/media/${newSha}/`);
    });
  });
});

describe('media helpers', () => {
  it.each([
    [undefined, 0, null],
    ['bytes=0-0', 10, { start: 0, end: 0 }],
    ['bytes=5-2', 10, null],
    ['bytes=-0', 10, 'unsatisfiable'],
    ['bytes=-20', 10, { start: 0, end: 9 }],
    ['bytes=0-', 0, 'unsatisfiable'],
    ['bytes = 2 - 3', 10, { start: 2, end: 3 }],
  ] as const)('resolveRange(%s, %d) = %j', (header, size, expected) => {
    expect(resolveRange(header, size)).toEqual(expected);
  });

  it('rewriteEntryText keeps key order and every other field', () => {
    const body = '{"uuid":"u","images":["http://m/a.jpg","http://m/b.jpg"],"emoji_file":null,"name":"A"}';
    const map = new Map([['http://m/b.jpg', '/media/abc/b.jpg']]);
    expect(rewriteEntryText(body, map, 'http://mirror')).toBe(
      '{"uuid":"u","images":["http://m/a.jpg","http://mirror/media/abc/b.jpg"],"emoji_file":null,"name":"A"}',
    );
  });
});
