import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { crawl, type CrawlOptions } from '../../src/upstream/crawl.js';
import {
  OPTIONS_BODY,
  makeEntries,
  makeEntry,
  startFakeDrf,
  type FakeDrf,
  type FakeDrfOptions,
} from './fake-drf.js';
import { catchMirrorError, startRawServer, testClient, type RawServer, type TestClient } from './harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function upstream(options: FakeDrfOptions = {}): Promise<FakeDrf> {
  const started = await startFakeDrf(options);
  cleanups.push(() => started.close());
  return started;
}

async function foreignHost(): Promise<RawServer> {
  const started = await startRawServer((_req, res) => res.end('{}'));
  cleanups.push(() => started.close());
  return started;
}

function client(baseUrl: string): TestClient {
  const created = testClient(baseUrl);
  cleanups.push(() => created.close());
  return created;
}

function run(up: FakeDrf, overrides: Partial<CrawlOptions> = {}) {
  return crawl({
    client: client(up.baseUrl),
    baseUrl: up.baseUrl,
    concurrency: 4,
    maxPages: 1000,
    logger: silentLogger(),
    ...overrides,
  });
}

function pageRequests(up: FakeDrf): string[] {
  return up.requests.filter((r) => r.method === 'GET').map((r) => r.url);
}

describe('crawl', () => {
  it.each([1, 4])('reads every page in order with concurrency %i', async (concurrency) => {
    const source = makeEntries(21);
    const up = await upstream({ entries: source });
    const progress: [number, number][] = [];
    const result = await run(up, { concurrency, onProgress: (done, total) => progress.push([done, total]) });
    expect(result).toEqual({
      entries: source.map((entry, i) => ({
        page: Math.floor(i / 8) + 1,
        index: i % 8,
        uuid: entry.uuid,
        json: JSON.stringify(entry),
      })),
      count: 21,
      pageSize: 8,
      pages: 3,
      unknownFields: [],
      optionsBody: OPTIONS_BODY,
      repeatedUuids: [],
      attempts: 1,
    });
    expect(progress).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    // Page 1 is read again after the last page: the same bytes show no edit tore the listing.
    expect(pageRequests(up).sort()).toEqual([
      LIST_PATH,
      LIST_PATH,
      `${LIST_PATH}?page=2`,
      `${LIST_PATH}?page=3`,
    ]);
    expect(pageRequests(up).at(-1)).toBe(LIST_PATH);
    expect(up.requests.filter((r) => r.method === 'OPTIONS').map((r) => r.url)).toEqual([LIST_PATH]);
  });

  it('gives the same result sequentially and concurrently, and only concurrently overlaps requests', async () => {
    const source = makeEntries(8 * 40 - 3);
    const sequential = await upstream({ entries: source });
    const concurrent = await upstream({ entries: source, gateInFlight: 4 });
    const one = await run(sequential, { concurrency: 1 });
    const four = await run(concurrent, { concurrency: 4 });
    expect(four).toEqual({ ...one, optionsBody: OPTIONS_BODY });
    expect(one.entries).toHaveLength(source.length);
    // Page requests only: the first page runs alongside the OPTIONS request.
    expect(sequential.maxInFlight).toBeLessThanOrEqual(2);
    expect(concurrent.maxInFlight).toBe(4);
    expect(pageRequests(sequential)).toEqual([
      LIST_PATH,
      ...Array.from({ length: 39 }, (_, i) => `${LIST_PATH}?page=${i + 2}`),
      LIST_PATH,
    ]);
  });

  it('keeps a path prefix in the base URL', async () => {
    const up = await upstream({ prefix: '/mount' });
    const result = await run(up);
    expect(result.count).toBe(21);
    expect(pageRequests(up)).toContain(`/mount${LIST_PATH}?page=3`);
  });

  it.each([
    ['an empty listing', 0, { pages: 1, pageSize: 0 }],
    ['one partial page', 5, { pages: 1, pageSize: 5 }],
    ['one full page', 8, { pages: 1, pageSize: 8 }],
    ['full pages only', 16, { pages: 2, pageSize: 8 }],
  ])('handles %s', async (_label, n, shape) => {
    const up = await upstream({ entries: makeEntries(n) });
    const result = await run(up);
    expect(result).toMatchObject({ count: n, ...shape });
    expect(result.entries).toHaveLength(n);
  });

  it('lists uuids that appear more than once', async () => {
    const entries = makeEntries(21);
    entries[12] = { ...makeEntry(3), name: 'Changed' };
    entries[20] = makeEntry(3);
    entries[19] = makeEntry(5);
    const result = await run(await upstream({ entries }));
    expect(result.repeatedUuids).toEqual([makeEntry(3).uuid, makeEntry(5).uuid]);
    expect(result.entries[12]?.json).toContain('"Changed"');
  });

  it('collects unknown fields with the first page and index they appear at', async () => {
    const entries = makeEntries(21);
    entries[19] = makeEntry(19, { team: 'x' });
    entries[10] = makeEntry(10, { team: 'y' });
    entries[11] = makeEntry(11, { level: 1 });
    const result = await run(await upstream({ entries }));
    expect(result.unknownFields).toEqual([
      { field: 'team', page: 2, index: 2 },
      { field: 'level', page: 2, index: 3 },
    ]);
    expect(result.entries[19]?.json).toContain('"team":"x"');
  });

  it('fails with a message naming page, entry, field and value', async () => {
    const entries = makeEntries(21);
    entries[13] = { ...makeEntry(13), show_image: 'yes' };
    const up = await upstream({ entries });
    const error = await catchMirrorError(() => run(up));
    expect(error.code).toBe('UPSTREAM_SCHEMA');
    expect(error.message).toBe(
      `page 2, entry 5 (uuid "${makeEntry(13).uuid}"): field "show_image": expected boolean, received "yes"`,
    );
  });

  it('returns optionsBody null when OPTIONS fails, and still crawls', async () => {
    const up = await upstream({
      intercept: (req, res) => {
        if (req.method !== 'OPTIONS') return false;
        res.writeHead(405).end();
        return true;
      },
    });
    const result = await run(up);
    expect(result.optionsBody).toBeNull();
    expect(result.entries).toHaveLength(21);
  });
});

describe('crawl guards', () => {
  it.each([1, 4])('never requests a foreign next (page 1, concurrency %i)', async (concurrency) => {
    const foreign = await foreignHost();
    const up = await upstream({
      transform: (body, { page }) =>
        page === 1 ? { ...body, next: `${foreign.url}${LIST_PATH}?page=2` } : body,
    });
    const error = await catchMirrorError(() => run(up, { concurrency }));
    expect(error.code).toBe('UPSTREAM_FOREIGN_NEXT');
    expect(error.message).toContain(foreign.url);
    expect(foreign.hits).toBe(0);
    expect(pageRequests(up)).toEqual([LIST_PATH]);
  });

  it('never follows a foreign next found on a later page when following next', async () => {
    const foreign = await foreignHost();
    const up = await upstream({
      transform: (body, { page }) =>
        page === 2 ? { ...body, next: `${foreign.url}${LIST_PATH}?page=3` } : body,
    });
    const error = await catchMirrorError(() => run(up, { concurrency: 1 }));
    expect(error.code).toBe('UPSTREAM_FOREIGN_NEXT');
    expect(error.details).toMatchObject({ page: 2, link: 'next' });
    expect(foreign.hits).toBe(0);
    expect(pageRequests(up)).toEqual([LIST_PATH, `${LIST_PATH}?page=2`]);
  });

  it('refuses a next on the same host but another path', async () => {
    const up = await upstream({
      transform: (body, { page }) => (page === 1 ? { ...body, next: `${up.origin}/admin/?page=2` } : body),
    });
    const error = await catchMirrorError(() => run(up, { concurrency: 1 }));
    expect(error.code).toBe('UPSTREAM_FOREIGN_NEXT');
    expect(pageRequests(up)).toEqual([LIST_PATH]);
    expect(up.requests.map((r) => r.url)).not.toContain('/admin/?page=2');
  });

  it('stops a next that loops back', async () => {
    const up = await upstream({
      transform: (body, { page }) =>
        page === 2 ? { ...body, next: `${up.origin}${LIST_PATH}?page=2` } : body,
    });
    const error = await catchMirrorError(() => run(up, { concurrency: 1 }));
    expect(error.code).toBe('UPSTREAM_PAGE_LOOP');
    expect(pageRequests(up)).toEqual([LIST_PATH, `${LIST_PATH}?page=2`]);
  });

  it('caps pages from count and page size before fetching page 2', async () => {
    const up = await upstream({ entries: makeEntries(8 * 11) });
    const error = await catchMirrorError(() => run(up, { maxPages: 10 }));
    expect(error.code).toBe('UPSTREAM_TOO_MANY_PAGES');
    expect(error.details).toEqual({ count: 88, pageSize: 8, pages: 11, maxPages: 10 });
    expect(pageRequests(up)).toEqual([LIST_PATH]);
  });
});

describe('crawl consistency', () => {
  /** Adds an entry each time page 1 is served, while `drifting()` says so. */
  function growingOnPageOne(drifting: (pageOneHits: number) => boolean): FakeDrfOptions['intercept'] {
    let pageOneHits = 0;
    return (req, _res, { page }) => {
      if (req.method === 'GET' && page === 1 && drifting(++pageOneHits)) {
        // Applied after page 1 is rendered, so every later page of this crawl sees a new count.
        setImmediate(() => up.entries.push(makeEntry(1000 + pageOneHits)));
      }
      return false;
    };
  }
  let up: FakeDrf;

  it('retries the whole crawl while the count drifts, then fails with UPSTREAM_INCONSISTENT', async () => {
    up = await upstream({ intercept: growingOnPageOne(() => true) });
    const error = await catchMirrorError(() => run(up, { concurrency: 1, maxCrawlAttempts: 3 }));
    expect(error.code).toBe('UPSTREAM_INCONSISTENT');
    expect(error.message).toContain('page 2: count expected');
    expect(error.details).toEqual({
      attempts: 3,
      page: 2,
      mismatches: [
        { attempt: 1, page: 2, what: 'count', expected: 21, got: 22 },
        { attempt: 2, page: 2, what: 'count', expected: 22, got: 23 },
        { attempt: 3, page: 2, what: 'count', expected: 23, got: 24 },
      ],
    });
    expect(pageRequests(up).filter((url) => url === LIST_PATH)).toHaveLength(3);
  });

  it('succeeds when the drift stops on retry, reporting the attempts used', async () => {
    up = await upstream({ intercept: growingOnPageOne((hits) => hits === 1) });
    const result = await run(up, { concurrency: 4 });
    expect(result.attempts).toBe(2);
    expect(result.count).toBe(22);
    expect(result.entries).toHaveLength(22);
  });

  it('reads page 1 again after the last page: an edit that reached it meanwhile retries the crawl', async () => {
    const source = makeEntries(21);
    let edited = false;
    up = await upstream({
      entries: source,
      intercept: (req, _res, { page }) => {
        // Both edits land while page 2 is being answered: page 1 was read before them, page 3 after.
        if (page === 2 && req.method === 'GET' && !edited) {
          edited = true;
          const [head, tail] = [source[0], source[20]];
          if (!head || !tail) throw new Error('too few entries');
          up.entries[0] = { ...head, post: 'Head of first page' };
          up.entries[20] = { ...tail, post: 'Head of last page' };
        }
        return false;
      },
    });
    const result = await run(up, { concurrency: 1 });
    expect(result.attempts).toBe(2);
    // Both edits, never the last page's alone with the first page's old version.
    expect(JSON.parse(result.entries[0]?.json ?? '{}')).toMatchObject({ post: 'Head of first page' });
    expect(JSON.parse(result.entries[20]?.json ?? '{}')).toMatchObject({ post: 'Head of last page' });
    expect(pageRequests(up)).toEqual([
      LIST_PATH,
      `${LIST_PATH}?page=2`,
      `${LIST_PATH}?page=3`,
      LIST_PATH,
      LIST_PATH,
      `${LIST_PATH}?page=2`,
      `${LIST_PATH}?page=3`,
      LIST_PATH,
    ]);
  });

  it('fails as UPSTREAM_INCONSISTENT, naming page 1, when page 1 changes on every read', async () => {
    let reads = 0;
    up = await upstream({
      entries: makeEntries(21),
      transform: (body, { page }) =>
        page === 1
          ? {
              ...body,
              results: [...(body.results as unknown[])].map((e, i) =>
                i === 0 ? { ...(e as object), post: `read ${++reads}` } : e,
              ),
            }
          : body,
    });
    const error = await catchMirrorError(() => run(up, { concurrency: 1, maxCrawlAttempts: 2 }));
    expect(error.code).toBe('UPSTREAM_INCONSISTENT');
    expect(error.message).toMatch(
      /last: page 1: bytes when read again after the last page expected sha256 [0-9a-f]{12}, got sha256 [0-9a-f]{12}$/,
    );
  });

  it('treats a 404 on a page that page 1 announced as the listing shrinking', async () => {
    let shrunk = false;
    up = await upstream({
      intercept: (req, _res, { page }) => {
        if (page === 1 && req.method === 'GET' && !shrunk) {
          shrunk = true;
          setImmediate(() => up.entries.splice(8));
        }
        return false;
      },
    });
    const result = await run(up, { concurrency: 1 });
    expect(result).toMatchObject({ attempts: 2, count: 8, pages: 1 });
    expect(pageRequests(up)).toEqual([LIST_PATH, `${LIST_PATH}?page=2`, LIST_PATH]);
  });

  it.each([
    [
      'a short middle page',
      (body: Record<string, unknown>, page: number) =>
        page === 2 ? { ...body, results: (body.results as unknown[]).slice(1) } : body,
      'page 2: results length expected 8, got 7',
    ],
    [
      'a short last page',
      (body: Record<string, unknown>, page: number) =>
        page === 3 ? { ...body, results: (body.results as unknown[]).slice(1) } : body,
      'page 3: results length expected 5, got 4',
    ],
  ])('fails on %s after retrying', async (_label, transform, message) => {
    up = await upstream({ transform: (body, { page }) => transform(body, page) });
    const error = await catchMirrorError(() => run(up, { maxCrawlAttempts: 2 }));
    expect(error.code).toBe('UPSTREAM_INCONSISTENT');
    expect(error.message).toContain(message);
  });
});

describe('crawl cancellation', () => {
  it('an aborted signal stops the crawl with RUN_ABORTED', async () => {
    const controller = new AbortController();
    const up = await upstream({
      intercept: (_req, _res, { page }) => {
        if (page !== 2) return false;
        controller.abort(new Error('shutdown'));
        return true; // never answers: only the abort can end this request
      },
    });
    const error = await catchMirrorError(() => run(up, { signal: controller.signal }));
    expect(error.code).toBe('RUN_ABORTED');
    expect(error.details).toMatchObject({ page: 2 });
  });
});
