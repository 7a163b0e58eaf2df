import { connect } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createRouteTable } from '../../src/http/route-table.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { listedMediaUrls, mediaRig, sha256, type MediaRig } from '../media/harness.js';

/**
 * One request on its own connection, read to its close: the answer's bytes as the client gets
 * them, but for the Date line (the one part two answers of any server differ in).
 */
function exchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(raw, 'latin1'));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () =>
      resolve(
        Buffer.concat(chunks)
          .toString('latin1')
          .replace(/\r\ndate: [^\r]*/i, ''),
      ),
    );
  });
}

const ask = (
  port: number,
  method: string,
  path: string,
  headers = 'Host: mirror.test\r\n',
): Promise<string> => exchange(port, `${method} ${path} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);

const statusOf = (answer: string): number => Number(answer.slice(9, 12));
const bodyOf = (answer: string): string => answer.slice(answer.indexOf('\r\n\r\n') + 4);

const TOKEN = 'internal-port-admin-token';

/** A synced store with mirrored media, and one of its files as /media/ serves it. */
async function mirroredMedia(): Promise<{ rig: MediaRig; path: string; bytes: Buffer }> {
  const rig = await mediaRig();
  await rig.sync();
  const url = listedMediaUrls(rig.upstream, rig.host)[0] ?? '';
  const bytes = rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0);
  return { rig, path: `/media/${sha256(bytes)}/${url.split('/').at(-1) ?? ''}`, bytes };
}

/** The mirror as today (one port) and split by INTERNAL_PORT, on one store. */
async function bothWays(rig: MediaRig, settings: { publicBaseUrl?: string } = {}) {
  const media = { media: { dir: rig.media.dir ?? '', rewrite: false } };
  const trigger = () => Promise.resolve({ started: false, reason: 'running' } as never);
  const options = { adminToken: TOKEN, ...settings, ...media };
  const single = await startMirror(rig.store, options, trigger);
  const split = await startMirror(rig.store, { ...options, internalPort: 0 }, trigger);
  const internalUrl = split.internalUrl();
  if (internalUrl === null) throw new Error('the split mirror has no internal listener');
  return { single, split, internalPort: Number(new URL(internalUrl).port), internalUrl };
}

// A path of each route pattern (a uuid no coworker has: its page answers, with its own 404).
const concrete = (pattern: string): string =>
  pattern.replace(':uuid', 'u'.repeat(32)).replace(':id', '1').replace('*', 'x');

describe('INTERNAL_PORT: what a website needs on PORT, the rest on the internal listener', () => {
  it('PORT answers only the list, media and health checks; every other route gets Django’s 404 of an unknown path, byte for byte', async () => {
    const { rig, path: mediaPath, bytes } = await mirroredMedia();
    const { single, split, internalPort } = await bothWays(rig);
    const routes = split.routes.routes.flatMap((r) => r.methods.map((m) => [m, r.url, r.public] as const));
    // The surfaces the split is for are among the routes the sweep below asks for.
    const swept = routes.map(([method, url]) => `${method} ${url}`);
    for (const route of [
      'GET /metrics',
      'GET /api/mirror/runs/',
      'GET /api/mirror/coworkers/:uuid/',
      'GET /api/mirror/changes.atom',
      'GET /api/mirror/deliveries/',
      'POST /api/mirror/sync/',
      'GET /',
      'GET /changes/',
      'GET /coworkers/:uuid/',
    ])
      expect(swept).toContain(route);
    expect(routes.filter(([, , isPublic]) => isPublic).map(([m, url]) => `${m} ${url}`)).toEqual([
      'GET /healthz',
      'HEAD /healthz',
      'GET /readyz',
      'HEAD /readyz',
    ]);

    for (const [method, url, isPublic] of routes) {
      const path = concrete(url);
      const today404 = await ask(single.port, method, '/no-such-path/');
      expect(statusOf(today404)).toBe(404);
      const onPublic = await ask(split.port, method, path);
      const onInternal = await ask(internalPort, method, path);
      const onSingle = await ask(single.port, method, path);
      expect(onInternal, `${method} ${url} on the internal port`).not.toBe(today404);
      expect(statusOf(onInternal), `${method} ${url}`).toBe(statusOf(onSingle));
      if (isPublic) {
        expect(statusOf(onPublic), `${method} ${url} on PORT`).toBe(statusOf(onInternal));
        expect(onPublic).not.toBe(today404);
      } else expect(onPublic, `${method} ${url} on PORT`).toBe(today404);
    }

    // The list endpoint, its redirect and its own 404, and the media, the same on both listeners.
    for (const path of [`${LIST_PATH}?page=2`, LIST_PATH.slice(0, -1), `${LIST_PATH}?page=9`, mediaPath]) {
      const onPublic = await ask(split.port, 'GET', path);
      expect(onPublic, path).toBe(await ask(internalPort, 'GET', path));
      expect(onPublic, path).toBe(await ask(single.port, 'GET', path));
    }
    const media = await ask(split.port, 'GET', mediaPath);
    expect({ status: statusOf(media), body: Buffer.from(bodyOf(media), 'latin1') }).toEqual({
      status: 200,
      body: bytes,
    });
    expect(bodyOf(await ask(split.port, 'GET', '/healthz'))).toBe('{"status":"ok"}');
    expect(JSON.parse(bodyOf(await ask(split.port, 'GET', '/readyz')))).toMatchObject({ status: 'ready' });
  });

  it('links of the history API and feeds name the internal address, not PUBLIC_BASE_URL; the list’s stay the public ones', async () => {
    const { rig } = await mirroredMedia();
    await rig.sync();
    const { single, internalPort, internalUrl } = await bothWays(rig, {
      publicBaseUrl: 'https://mirror.example.com',
    });
    const host = `Host: 127.0.0.1:${internalPort}\r\n`;
    const runs = JSON.parse(
      bodyOf(await ask(internalPort, 'GET', '/api/mirror/runs/?page_size=1', host)),
    ) as {
      next: string;
    };
    expect(runs.next).toBe(`${internalUrl}/api/mirror/runs/?page=2&page_size=1`);
    const feed = bodyOf(await ask(internalPort, 'GET', '/api/mirror/changes.atom', host));
    expect(feed).toContain(`<link rel="self" href="${internalUrl}/api/mirror/changes.atom"`);
    expect(feed).not.toContain('mirror.example.com');
    // The list endpoint answers as on PORT, where a website follows its links.
    const list = JSON.parse(bodyOf(await ask(internalPort, 'GET', LIST_PATH, host))) as { next: string };
    expect(list.next).toBe(`https://mirror.example.com${LIST_PATH}?page=2`);
    // One port: PUBLIC_BASE_URL names the pages' address too, as before.
    const before = JSON.parse(bodyOf(await ask(single.port, 'GET', '/api/mirror/runs/?page_size=1'))) as {
      next: string;
    };
    expect(before.next).toBe('https://mirror.example.com/api/mirror/runs/?page=2&page_size=1');
  });

  it('a request without Host names the listener it came to, each its own, from one answer cache', async () => {
    const { rig } = await mirroredMedia();
    await rig.sync();
    const { split, internalPort } = await bothWays(rig);
    const hostless = (port: number) => exchange(port, `GET ${LIST_PATH} HTTP/1.0\r\n\r\n`);
    // PORT first: its answer is cached, and must not be the internal listener's.
    for (const port of [split.port, internalPort, split.port, internalPort]) {
      const list = JSON.parse(bodyOf(await hostless(port))) as { next: string };
      expect(list.next).toBe(`http://127.0.0.1:${port}${LIST_PATH}?page=2`);
    }
    // The history API's links too, where only the internal listener answers it.
    const runs = await exchange(internalPort, 'GET /api/mirror/runs/?page_size=1 HTTP/1.0\r\n\r\n');
    expect((JSON.parse(bodyOf(runs)) as { next: string }).next).toBe(
      `http://127.0.0.1:${internalPort}/api/mirror/runs/?page=2&page_size=1`,
    );
  });

  it('a public route is a fixed path: one with a parameter is refused when registered', async () => {
    const app = Fastify();
    const table = createRouteTable();
    table.collectFrom(app);
    app.get('/fixed', { config: { public: true } }, () => 'ok');
    expect(() => app.get('/open/:id', { config: { public: true } }, () => 'no')).toThrow(
      'public route /open/:id: a public route is a fixed path, without parameters',
    );
    await app.ready();
    expect([table.isPublic('/fixed'), table.isPublic('/open/1'), table.has('/fixed')]).toEqual([
      true,
      false,
      true,
    ]);
    await app.close();
  });
});
