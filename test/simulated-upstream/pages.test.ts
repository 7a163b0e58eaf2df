import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { fetchPage, fetchRaw, walk } from './http.js';

const started: SimulatedUpstream[] = [];
async function start(options: Parameters<typeof startSimulatedUpstream>[0]): Promise<SimulatedUpstream> {
  const upstream = await startSimulatedUpstream(options);
  started.push(upstream);
  return upstream;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((upstream) => upstream.close()));
});

describe('pagination', () => {
  it.each([
    { count: 0, pageSize: 8, pages: 1 },
    { count: 1, pageSize: 8, pages: 1 },
    { count: 8, pageSize: 8, pages: 1 },
    { count: 9, pageSize: 8, pages: 2 },
    { count: 21, pageSize: 8, pages: 3 },
    { count: 100, pageSize: 8, pages: 13 },
    { count: 10, pageSize: 3, pages: 4 },
  ])('walking next over $count rows of $pageSize gives $pages pages and every row once', async (c) => {
    const upstream = await start({ seed: 7, count: c.count, pageSize: c.pageSize });
    const pages = await walk(upstream.listUrl);
    expect(pages).toHaveLength(c.pages);
    expect(pages.flatMap((page) => page.results)).toEqual(upstream.data.entries());
    for (const [i, page] of pages.entries()) {
      const number = i + 1;
      expect(page.count).toBe(c.count);
      expect(page.results.length).toBe(number < c.pages ? c.pageSize : c.count - (c.pages - 1) * c.pageSize);
      const expectedPrevious =
        number === 1 ? null : number === 2 ? upstream.listUrl : `${upstream.listUrl}?page=${number - 1}`;
      expect(page.previous).toBe(expectedPrevious);
      expect(page.next).toBe(number === c.pages ? null : `${upstream.listUrl}?page=${number + 1}`);
    }
  });

  it.each([
    { query: '?page=0', status: 404 },
    { query: '?page=-1', status: 404 },
    { query: '?page=4', status: 404 },
    { query: '?page=abc', status: 404 },
    { query: '?page=1.0', status: 404 },
    { query: '?page=1&page=9', status: 404 },
    { query: '?page=9&page=3', status: 200, first: 16 },
    { query: '?page=', status: 404 },
    { query: '?page=%D9%A3', status: 200, first: 16 },
    { query: '?page=last', status: 200, first: 16 },
    { query: '?page=%202%20', status: 200, first: 8 },
    { query: '?page=+2', status: 200, first: 8 },
    { query: '?page=02', status: 200, first: 8 },
  ])('$query answers $status as DRF does', async ({ query, status, first }) => {
    const upstream = await start({ seed: 3, count: 21 });
    const answer = await fetchRaw(`${upstream.listUrl}${query}`);
    expect(answer.status).toBe(status);
    if (status === 404) expect(answer.text).toBe('{"detail":"Invalid page."}');
    else
      expect((JSON.parse(answer.text) as { results: unknown[] }).results[0]).toEqual(
        upstream.data.entries()[first ?? -1],
      );
  });

  it('builds next and previous from the Host header and keeps other query parameters, sorted', async () => {
    const upstream = await start({ seed: 3, count: 30 });
    const answer = await fetchRaw(`${upstream.listUrl}?z=1&page=2&a=%C3%A9+b`, {
      headers: { host: 'mirror.test:81' },
    });
    const page = JSON.parse(answer.text) as { next: string; previous: string };
    expect(page.next).toBe(`http://mirror.test:81${LIST_PATH}?a=%C3%A9+b&page=3&z=1`);
    expect(page.previous).toBe(`http://mirror.test:81${LIST_PATH}?a=%C3%A9+b&z=1`);
  });

  it('renders like JSONRenderer: compact, non-ASCII raw, U+2028 and U+2029 escaped', async () => {
    const entry = {
      uuid: 'a'.repeat(32),
      name: 'Zoë 🌸 "Z"',
      post: 'line\u2028para\u2029end',
      emoji_file: null,
      emoji_file_webm: null,
      show_image: true,
      images: [],
    };
    const upstream = await start({ entries: [entry] });
    const answer = await fetchRaw(upstream.listUrl);
    expect(answer.text).toBe(
      `{"count":1,"next":null,"previous":null,"results":[{"uuid":"${'a'.repeat(32)}","name":"Zoë 🌸 \\"Z\\"",` +
        '"post":"line\\u2028para\\u2029end","emoji_file":null,"emoji_file_webm":null,"show_image":true,"images":[]}]}',
    );
  });

  it('serves a changed listing right after a mutation (page cache invalidated)', async () => {
    const upstream = await start({ seed: 5, count: 21 });
    const before = await fetchPage(upstream.listUrl);
    const change = upstream.data.edit(1, 'post');
    if (change.kind !== 'edit') throw new Error('expected an edit');
    const edit = change.edited[0];
    if (!edit) throw new Error('expected one edit');
    const pageOf = Math.floor(edit.index / 8) + 1;
    const after = await fetchPage(`${upstream.listUrl}?page=${pageOf}`);
    expect(after.results[edit.index % 8]).toEqual(edit.entry);
    expect(after.results[edit.index % 8]?.post).toBe(edit.after);
    if (pageOf === 1) expect(after).not.toEqual(before);
  });

  it('answers around the list view as Django does: slash redirect, 404 page, 405', async () => {
    const upstream = await start({ seed: 1 });
    const noSlash = await fetchRaw(`${upstream.url}${LIST_PATH.slice(0, -1)}?page=2`);
    expect(noSlash.status).toBe(301);
    expect(noSlash.headers.location).toBe(`${LIST_PATH}?page=2`);
    const elsewhere = await fetchRaw(`${upstream.url}/api/other/`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers['content-type']).toBe('text/html');
    const del = await fetchRaw(upstream.listUrl, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect(del.text).toBe('{"detail":"Method \\"DELETE\\" not allowed."}');
  });

  it('records every request with method, target and headers', async () => {
    const upstream = await start({ seed: 1 });
    await fetchRaw(`${upstream.listUrl}?page=2`, { headers: { 'user-agent': 'spec/1' } });
    await fetchRaw(upstream.listUrl, { method: 'HEAD' });
    expect(upstream.requests.map((r) => [r.method, r.url, r.headers['user-agent']])).toEqual([
      ['GET', `${LIST_PATH}?page=2`, 'spec/1'],
      ['HEAD', LIST_PATH, undefined],
    ]);
  });
});
