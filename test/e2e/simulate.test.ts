import { createServer } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { mediaRefs } from '../../src/media/media-refs.js';
import { checkType } from '../../src/media/sniff.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { freePortPair } from '../helpers/free-port-pair.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt());

interface ListeningLine {
  time: unknown;
  url: string;
  list: string;
  mediaHost: string;
  entries: number;
  mirrorWith: string;
}

/** `simulate` with `args`, once it says where it listens; stopped when the test ends. */
async function simulate(args: string[]) {
  const proc = runCli(['simulate', '--mutate-every', '0', ...args], {});
  const line = JSON.parse(await proc.waitFor(/"msg":"simulated upstream listening"/)) as ListeningLine;
  return { proc, line };
}

/** The listing's distinct media URLs, in listing order, crawled page by page through `next`. */
async function listedMedia(listUrl: string): Promise<string[]> {
  const urls = new Set<string>();
  for (let next: string | null = listUrl; next !== null;) {
    const page = (await (await fetch(next)).json()) as { next: string | null; results: unknown[] };
    for (const entry of page.results) for (const { url } of mediaRefs(entry)) urls.add(url);
    next = page.next;
  }
  return [...urls];
}

const TYPE_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  webm: 'video/webm',
  mp4: 'video/mp4',
  gif: 'image/gif',
};

interface Served {
  status: number;
  contentType: string | null;
  bytesMatchType: boolean;
  validators: boolean;
  revalidated: number;
}

/** What a media URL answers: its status, type, whether the bytes are that type, and a 304 for its ETag. */
async function served(url: string): Promise<Served & { size: number }> {
  const res = await fetch(url);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const contentType = res.headers.get('content-type');
  const etag = res.headers.get('etag');
  const again = await fetch(url, { headers: { 'if-none-match': etag ?? '' } });
  await again.arrayBuffer();
  return {
    status: res.status,
    contentType,
    bytesMatchType: checkType(contentType ?? undefined, bytes).ok,
    validators: etag !== null && res.headers.get('last-modified') !== null,
    revalidated: again.status,
    size: bytes.length,
  };
}

describe('coworker-mirror simulate (built CLI, real processes)', () => {
  it('regression: serves the media its listing names, and a mirror given the command it prints fetches them all', async () => {
    const port = await freePortPair();
    const { proc, line } = await simulate(['--port', String(port), '--count', '12']);
    const origin = `http://127.0.0.1:${port}`;
    const mediaOrigin = `http://127.0.0.1:${port + 1}`;
    const { time, ...fields } = line;
    expect(typeof time).toBe('number');
    expect(fields).toEqual({
      level: 30,
      name: 'coworker-mirror',
      msg: 'simulated upstream listening',
      url: origin,
      list: `${origin}${LIST_PATH}`,
      mediaHost: mediaOrigin,
      entries: 12,
      mirrorWith: `UPSTREAM_URL=${origin} MEDIA_ORIGINS=${mediaOrigin} coworker-mirror start --db ./data/simulated.db`,
    });

    const urls = await listedMedia(line.list);
    expect(urls.length).toBeGreaterThan(5);
    let bytes = 0;
    for (const url of urls) {
      expect(url.startsWith(`${mediaOrigin}/media/`), url).toBe(true);
      const { size, ...answer } = await served(url);
      bytes += size;
      const extension = (new URL(url).pathname.split('.').pop() ?? '').toLowerCase();
      expect(answer, url).toEqual({
        status: 200,
        contentType: TYPE_BY_EXTENSION[extension],
        bytesMatchType: true,
        validators: true,
        revalidated: 304,
      });
    }

    // The command it printed, as a one-off sync into a fresh database.
    const env = Object.fromEntries(
      line.mirrorWith
        .split(' ')
        .filter((part) => /^[A-Z_]+=/.test(part))
        .map((part) => [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)]),
    );
    expect(Object.keys(env)).toEqual(['UPSTREAM_URL', 'MEDIA_ORIGINS']);
    const db = join(tempDir(), 'simulated.db');
    const sync = runCli(['sync', '--db', db], env);
    expect((await sync.exited).code, sync.output()).toBe(EXIT.ok);
    expect(sync.output()).not.toContain('not mirrored');
    const runs = runCli(['runs', '--json', '--db', db], {});
    expect((await runs.exited).code, runs.output()).toBe(EXIT.ok);
    expect((JSON.parse(runs.output()) as { media?: unknown }).media).toEqual({
      fetched: urls.length,
      revalidated: 0,
      failed: 0,
      bytes,
    });

    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(EXIT.ok);
  });

  it('regression: with --port 0 its media host takes a free port too, and the listing names it', async () => {
    const { line } = await simulate(['--port', '0', '--count', '3']);
    expect(line.mediaHost).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(line.mediaHost).not.toBe(line.url);
    expect(line.mirrorWith).toBe(
      `UPSTREAM_URL=${line.url} MEDIA_ORIGINS=${line.mediaHost} coworker-mirror start --db ./data/simulated.db`,
    );
    const urls = await listedMedia(line.list);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) {
      expect(url.startsWith(`${line.mediaHost}/media/`), url).toBe(true);
      expect((await fetch(url)).status, url).toBe(200);
    }
  });

  it('a busy next port (its media host) exits 2 naming --port, without a stack', async () => {
    const port = await freePortPair();
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(port + 1, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => blocker.close(() => r())));
    const proc = runCli(['simulate', '--port', String(port)], {});
    const outcome = await Promise.race([
      proc.exited.then(({ code }) => code),
      proc.waitFor(/simulated upstream listening/).then(() => 'listening'),
    ]);
    expect(outcome, proc.output()).toBe(EXIT.usage);
    expect(proc.output()).toBe(
      'coworker-mirror: invalid configuration:\n' +
        `  --port: cannot listen on 127.0.0.1:${port + 1} (EADDRINUSE); choose another --port (0: any free port)\n`,
    );
  });
});
