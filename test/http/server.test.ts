import { describe, expect, it } from 'vitest';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';
import { comparedHeaders, goldenEntries, loadGoldenCases } from './drf/golden-files.js';
import { sendRaw } from './drf/raw-http.js';

const golden = loadGoldenCases();

function rawRequest(c: (typeof golden)[number]): Buffer {
  const lines = [`${c.method} ${c.url} HTTP/1.1`, ...Object.entries(c.headers).map(([k, v]) => `${k}: ${v}`)];
  const body = c.method === 'POST' ? '{}' : '';
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'utf8');
}

describe('the served list endpoint equals the DRF golden exchanges', () => {
  it.each(golden.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const store = tempDatabase();
    const entries = goldenEntries(golden).map((e) => JSON.parse(e) as Record<string, unknown>);
    const upstream = await simulatedUpstream({ entries });
    await sync(store, upstream);
    const mirror = await startMirror(store);
    const answer = await sendRaw(mirror.port, rawRequest(c), c.method === 'HEAD');
    expect(answer.status).toBe(c.status);
    expect(comparedHeaders(answer.headers)).toEqual(comparedHeaders(c.responseHeaders));
    expect(answer.body.toString('utf8')).toBe(c.body.toString('utf8'));
    const length = answer.headers.find(([n]) => n.toLowerCase() === 'content-length')?.[1];
    const goldenLength = c.responseHeaders.find(([n]) => n.toLowerCase() === 'content-length')?.[1];
    expect(length).toBe(goldenLength);
  });
});

describe('list endpoint: mirror additions', () => {
  it('answers 503 with a JSON body before the first successful run, never an empty list', async () => {
    const store = tempDatabase();
    const mirror = await startMirror(store);
    const res = await fetch(`${mirror.url}${LIST_PATH}`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ detail: 'The mirror has no snapshot yet: no sync has succeeded.' });
  });

  it('ETag + If-None-Match → 304; Last-Modified and the fetch time are sent', async () => {
    const store = tempDatabase();
    await sync(store, await simulatedUpstream({ count: 20 }));
    const mirror = await startMirror(store);
    const first = await fetch(`${mirror.url}${LIST_PATH}?page=2`);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(first.headers.get('last-modified')).toMatch(/GMT$/);
    expect(first.headers.get('x-mirror-fetched-at')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const again = await fetch(`${mirror.url}${LIST_PATH}?page=2`, {
      headers: { 'If-None-Match': etag ?? '' },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const other = await fetch(`${mirror.url}${LIST_PATH}?page=1`, {
      headers: { 'If-None-Match': etag ?? '' },
    });
    expect(other.status).toBe(200);
  });

  it('time travel: ?as_of= serves each of three runs as it was, and carries as_of in next', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ count: 12 });
    const mirror = await startMirror(store);
    const bodies: string[] = [];
    const times: string[] = [];
    for (let i = 0; i < 3; i++) {
      if (i > 0) upstream.data.edit(2);
      await sync(store, upstream);
      times.push(new Date().toISOString());
      mirror.snapshots.refresh();
      bodies.push(await (await fetch(`${mirror.url}${LIST_PATH}`)).text());
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(new Set(bodies).size).toBe(3);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${mirror.url}${LIST_PATH}?as_of=${times[i]}`);
      const body = (await res.json()) as { next: string; results: unknown[] };
      expect(JSON.stringify(body.results)).toBe(
        JSON.stringify((JSON.parse(bodies[i] ?? '') as { results: unknown[] }).results),
      );
      expect(body.next).toContain(`as_of=${encodeURIComponent(times[i] ?? '')}`);
    }
    const before = await fetch(`${mirror.url}${LIST_PATH}?as_of=2000-01-01T00:00:00Z`);
    expect(before.status).toBe(404);
    expect(((await before.json()) as { detail: string }).detail).toMatch(/no sync had succeeded/);
    const bad = await fetch(`${mirror.url}${LIST_PATH}?as_of=yesterday`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/as_of/);
  });

  it('a snapshot switch under concurrent requests never yields a mixed page', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ count: 64, seed: 4 });
    await sync(store, upstream);
    const mirror = await startMirror(store, { snapshotPollMs: 5 });
    const pages = [1, 2, 3, 4, 5, 6, 7, 8];
    const snapshotsSeen = new Set<string>();
    const valid = new Map<number, Set<string>>();
    const record = async () => {
      for (const p of pages) {
        const body = await (await fetch(`${mirror.url}${LIST_PATH}?page=${p}`)).text();
        const set = valid.get(p) ?? new Set<string>();
        set.add(body);
        valid.set(p, set);
      }
    };
    await record();
    const expected = new Map<number, Set<string>>();
    const load = (async () => {
      for (let i = 0; i < 200; i++) {
        const p = pages[i % pages.length] ?? 1;
        const body = await (await fetch(`${mirror.url}${LIST_PATH}?page=${p}`)).text();
        snapshotsSeen.add(`${p}:${body}`);
      }
    })();
    for (let i = 0; i < 4; i++) {
      upstream.data.edit(10);
      await sync(store, upstream);
      mirror.snapshots.refresh();
      await record();
    }
    await load;
    // Every page body seen under load is exactly one of the pages some snapshot served.
    for (const [p, set] of valid) expected.set(p, set);
    for (const seen of snapshotsSeen) {
      const [p, ...rest] = seen.split(':');
      expect(expected.get(Number(p))?.has(rest.join(':'))).toBe(true);
    }
  });
});
