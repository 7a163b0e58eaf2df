import { connect } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { coworkerSchema, LIST_PATH } from '../../src/upstream/contract.js';
import { fetchPage, fetchRaw, walk } from './http.js';

const started: SimulatedUpstream[] = [];
async function start(options: Parameters<typeof startSimulatedUpstream>[0] = {}): Promise<SimulatedUpstream> {
  const upstream = await startSimulatedUpstream({ seed: 9, count: 21, ...options });
  started.push(upstream);
  return upstream;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((upstream) => upstream.close()));
});

/** Sends one request on a bare socket; reports the bytes received and how the server ended it. */
function rawExchange(
  upstream: SimulatedUpstream,
  target: string,
): Promise<{ data: Buffer; end: 'fin' | 'reset' }> {
  const { hostname, port } = new URL(upstream.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      resolve({ data: Buffer.concat(chunks), end: 'fin' });
      socket.destroy();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET') resolve({ data: Buffer.concat(chunks), end: 'reset' });
      else reject(err);
    });
    socket.write(
      `GET ${target} HTTP/1.1\r\nHost: ${upstream.url.slice(7)}\r\nConnection: keep-alive\r\n\r\n`,
    );
  });
}

function split(data: Buffer): { head: string; body: Buffer } {
  const at = data.indexOf('\r\n\r\n');
  return { head: data.subarray(0, at).toString('latin1'), body: data.subarray(at + 4) };
}

describe('fault switches', () => {
  it('status5xx answers the status `times` times on the named page, then recovers', async () => {
    const upstream = await start();
    upstream.faults.set({ status5xx: { page: 2, times: 2, status: 502 } });
    const page2 = `${upstream.listUrl}?page=2`;
    expect((await fetchRaw(upstream.listUrl)).status).toBe(200);
    expect((await fetchRaw(page2)).status).toBe(502);
    expect((await fetchRaw(page2)).status).toBe(502);
    expect((await fetchRaw(page2)).status).toBe(200);
    expect(upstream.faults.active.status5xx).toBeUndefined();
    expect(upstream.faults.events).toEqual([
      { fault: 'status5xx', page: 2, status: 502 },
      { fault: 'status5xx', page: 2, status: 502 },
    ]);
  });

  it.each([
    { retryAfter: 7, header: '7', detail: 'Request was throttled. Expected available in 7 seconds.' },
    {
      retryAfter: 'Wed, 21 Oct 2026 07:28:00 GMT',
      header: 'Wed, 21 Oct 2026 07:28:00 GMT',
      detail: 'Request was throttled.',
    },
    {
      retryAfter: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
      header: 'Fri, 02 Jan 2026 03:04:05 GMT',
      detail: 'Request was throttled.',
    },
  ])(
    'rateLimit answers 429 with Retry-After $header, then recovers',
    async ({ retryAfter, header, detail }) => {
      const upstream = await start();
      upstream.faults.set({ rateLimit: { times: 1, retryAfter } });
      const limited = await fetchRaw(`${upstream.listUrl}?page=3`);
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBe(header);
      expect(JSON.parse(limited.text)).toEqual({ detail });
      expect((await fetchRaw(`${upstream.listUrl}?page=3`)).status).toBe(200);
    },
  );

  it.each([
    { fault: 'truncatedBody', end: 'fin' },
    { fault: 'resetMidBody', end: 'reset' },
  ] as const)('$fault sends the full Content-Length, half the body, then a $end', async ({ fault, end }) => {
    const upstream = await start();
    const full = await fetchRaw(`${upstream.listUrl}?page=2`);
    upstream.faults.set({ [fault]: { page: 2 } });
    const raw = await rawExchange(upstream, `${LIST_PATH}?page=2`);
    const { head, body } = split(raw.data);
    expect(raw.end).toBe(end);
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head).toContain(`Content-Length: ${full.body.length}\r\n`);
    expect(body.equals(full.body.subarray(0, body.length))).toBe(true);
    expect(body.length).toBeLessThan(full.body.length);
    // And undici, the crawler's client, fails reading that body.
    const response = await request(`${upstream.listUrl}?page=2`);
    await expect(response.body.text()).rejects.toThrow();
    expect((await fetchRaw(upstream.listUrl)).status).toBe(200);
  });

  it('invalidJson answers 200 application/json with a body that does not parse', async () => {
    const upstream = await start();
    upstream.faults.set({ invalidJson: { page: 1 } });
    const answer = await fetchRaw(upstream.listUrl);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['content-length']).toBe(String(answer.body.length));
    expect(() => JSON.parse(answer.text) as unknown).toThrow(SyntaxError);
  });

  it.each([false, true])('oversizeBody pads the page to the given bytes (chunked: %s)', async (chunked) => {
    const upstream = await start();
    const normal = await fetchPage(upstream.listUrl);
    upstream.faults.set({ oversizeBody: { page: 1, bytes: 3_000_000, chunked } });
    const answer = await fetchRaw(upstream.listUrl);
    expect(answer.body.length).toBe(3_000_000);
    expect(answer.headers['content-length']).toBe(chunked ? undefined : '3000000');
    expect(answer.headers['transfer-encoding']).toBe(chunked ? 'chunked' : undefined);
    expect(JSON.parse(answer.text)).toEqual(normal);
  });

  it.each([
    { field: 'uuid', value: 'NOT-A-UUID', missing: false },
    { field: 'show_image', value: 'yes', missing: false },
    { field: 'images', value: ['not a url'], missing: false },
    { field: 'post', value: undefined, missing: true },
  ])('invalidEntry sets $field on one entry of one page only', async ({ field, value, missing }) => {
    const upstream = await start();
    upstream.faults.set({ invalidEntry: { page: 2, index: 3, field, value, missing } });
    const pages = await walk(upstream.listUrl);
    const failing = pages.flatMap((page, p) =>
      page.results.flatMap((entry, i) => (coworkerSchema.safeParse(entry).success ? [] : [[p + 1, i]])),
    );
    expect(failing).toEqual([[2, 3]]);
    const entry = pages[1]?.results[3] ?? {};
    if (missing) expect(Object.keys(entry)).not.toContain(field);
    else expect(entry[field]).toEqual(value);
    expect({ ...entry, [field]: upstream.data.entries()[11]?.[field] }).toEqual(upstream.data.entries()[11]);
  });

  it('countDrift adds a row once page k was served, so later pages disagree', async () => {
    const upstream = await start();
    const original = upstream.data.entries();
    upstream.faults.set({ countDrift: { afterPage: 1 } });
    const pages = await walk(upstream.listUrl);
    expect(pages.map((page) => page.count)).toEqual([21, 22, 22]);
    expect(pages[1]?.results[0]).toEqual(original[7]);
    const event = upstream.faults.events.find((e) => e.fault === 'countDrift');
    expect(event?.page).toBe(1);
    expect(event?.change?.kind).toBe('add');
    expect(upstream.data.entries()).toEqual([
      ...(event?.change?.kind === 'add' ? event.change.added.map((p) => p.entry) : []),
      ...original,
    ]);
    expect(upstream.faults.active.countDrift).toBeUndefined();
  });

  it('foreignNext points next of the named page at another host', async () => {
    const upstream = await start();
    upstream.faults.set({ foreignNext: { page: 2 } });
    expect((await fetchPage(upstream.listUrl)).next).toBe(`${upstream.listUrl}?page=2`);
    expect((await fetchPage(`${upstream.listUrl}?page=2`)).next).toBe(
      `http://evil.example${LIST_PATH}?page=3`,
    );
  });

  it('nextLoop points next of the named page back to an earlier page', async () => {
    const upstream = await start({ count: 40 });
    upstream.faults.set({ nextLoop: { page: 3, to: 2 } });
    const seen: (string | null)[] = [];
    let url: string | null = upstream.listUrl;
    for (let i = 0; i < 6 && url; i++) {
      seen.push(url);
      url = (await fetchPage(url)).next;
    }
    expect(seen).toEqual([
      upstream.listUrl,
      `${upstream.listUrl}?page=2`,
      `${upstream.listUrl}?page=3`,
      `${upstream.listUrl}?page=2`,
      `${upstream.listUrl}?page=3`,
      `${upstream.listUrl}?page=2`,
    ]);
  });

  it('unordered draws every page from a fresh order: count holds, rows repeat and go missing', async () => {
    const crawl = async (upstream: SimulatedUpstream): Promise<string[]> =>
      (await walk(upstream.listUrl)).flatMap((page) => page.results.map((row) => JSON.stringify(row)));
    const upstream = await start({ count: 40, dupRate: 0 });
    const listing = upstream.data.entries().map((row) => JSON.stringify(row));
    upstream.faults.set({ unordered: { seed: 4 } });
    const first = await crawl(upstream);
    const second = await crawl(upstream);
    for (const rows of [first, second]) {
      expect(rows).toHaveLength(40);
      expect(rows.every((row) => listing.includes(row))).toBe(true);
      expect(new Set(rows).size).toBeLessThan(40);
    }
    expect(second).not.toEqual(first);
    const replay = await start({ count: 40, dupRate: 0 });
    replay.faults.set({ unordered: { seed: 4 } });
    expect(await crawl(replay)).toEqual(first);
  });

  it('emptyListing answers as DRF does for an empty table', async () => {
    const upstream = await start();
    upstream.faults.set({ emptyListing: true });
    expect((await fetchRaw(upstream.listUrl)).text).toBe(
      '{"count":0,"next":null,"previous":null,"results":[]}',
    );
    expect((await fetchRaw(`${upstream.listUrl}?page=2`)).status).toBe(404);
    upstream.faults.clear('emptyListing');
    expect((await fetchPage(upstream.listUrl)).count).toBe(21);
  });

  it('hang never answers the named page; other pages and close() still work', async () => {
    const upstream = await start();
    upstream.faults.set({ hang: { page: 2 } });
    await expect(request(`${upstream.listUrl}?page=2`, { headersTimeout: 300 })).rejects.toMatchObject({
      code: 'UND_ERR_HEADERS_TIMEOUT',
    });
    expect((await fetchRaw(upstream.listUrl)).status).toBe(200);
    expect(upstream.faults.events).toEqual([{ fault: 'hang', page: 2 }]);
  });

  it('latency holds every answer back (a client timeout shorter than it fires)', async () => {
    const upstream = await start();
    upstream.faults.set({ latency: 60_000 });
    await expect(request(upstream.listUrl, { headersTimeout: 300 })).rejects.toMatchObject({
      code: 'UND_ERR_HEADERS_TIMEOUT',
    });
    upstream.faults.clear('latency');
    expect((await fetchRaw(upstream.listUrl)).status).toBe(200);
  });

  it('rejects switch settings the schema does not allow, and clear() turns all off', async () => {
    const upstream = await start();
    expect(() => upstream.faults.set({ status5xx: { status: 418 as 500 } })).toThrow();
    expect(() => upstream.faults.set({ bogus: true } as never)).toThrow();
    upstream.faults.set({ status5xx: { times: 3 }, foreignNext: {} });
    expect(upstream.faults.active).toEqual({
      status5xx: { times: 3, status: 503 },
      foreignNext: { origin: 'http://evil.example' },
    });
    upstream.faults.clear();
    expect(upstream.faults.active).toEqual({});
    expect((await fetchRaw(upstream.listUrl)).status).toBe(200);
  });
});
