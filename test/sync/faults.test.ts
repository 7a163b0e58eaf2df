import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/errors.js';
import type { FaultSettingsInput } from '../../src/simulated-upstream/index.js';
import type { TestEnv } from '../helpers/config.js';
import { simulatedUpstream, storedState, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

interface FaultCase {
  name: string;
  faults: FaultSettingsInput;
  code: ErrorCode;
  /** Words the recorded reason must contain, so a person knows where to look. */
  reason: RegExp;
  settings?: TestEnv;
  /** Rows the fault itself adds to the upstream for good (count drift). */
  addsRows?: number;
}

const cases: FaultCase[] = [
  {
    name: '5xx on every attempt',
    faults: { status5xx: { page: 2, times: 10, status: 502 } },
    code: 'UPSTREAM_HTTP_STATUS',
    reason: /502/,
  },
  {
    name: '429 with a Retry-After over the cap',
    faults: { rateLimit: { page: 2, times: 10, retryAfter: 3600 } },
    code: 'UPSTREAM_HTTP_STATUS',
    reason: /Retry-After/i,
  },
  {
    name: 'truncated body',
    faults: { truncatedBody: { page: 2 } },
    code: 'UPSTREAM_NETWORK',
    reason: /page=2|page 2/,
  },
  {
    name: 'reset mid-body',
    faults: { resetMidBody: { page: 3 } },
    code: 'UPSTREAM_NETWORK',
    reason: /page=3|page 3/,
  },
  {
    name: 'invalid JSON',
    faults: { invalidJson: { page: 2 } },
    code: 'UPSTREAM_INVALID_JSON',
    reason: /JSON/,
  },
  {
    name: 'body over the cap',
    faults: { oversizeBody: { page: 2, bytes: 200_000 } },
    code: 'UPSTREAM_BODY_TOO_LARGE',
    reason: /bytes|limit|cap/i,
    settings: { UPSTREAM_MAX_BODY_BYTES: '100000' },
  },
  {
    name: 'invalid uuid',
    faults: { invalidEntry: { page: 2, index: 3, field: 'uuid', value: 'NOT-A-UUID' } },
    code: 'UPSTREAM_SCHEMA',
    reason: /page 2, entry 3.*uuid.*NOT-A-UUID/,
  },
  {
    name: 'show_image not a boolean',
    faults: { invalidEntry: { page: 3, index: 0, field: 'show_image', value: 'yes' } },
    code: 'UPSTREAM_SCHEMA',
    reason: /page 3, entry 0.*show_image.*yes/,
  },
  {
    name: 'missing field',
    faults: { invalidEntry: { page: 1, index: 1, field: 'post', missing: true } },
    code: 'UPSTREAM_SCHEMA',
    reason: /page 1, entry 1.*post/,
  },
  {
    name: 'count changes mid-crawl, every attempt',
    faults: { countDrift: { afterPage: 1, add: 1 } },
    code: 'UPSTREAM_INCONSISTENT',
    reason: /count|entries/i,
    settings: { SYNC_MAX_CRAWL_ATTEMPTS: '1', SYNC_CONCURRENCY: '1' },
    addsRows: 1,
  },
  {
    name: 'next to another host',
    faults: { foreignNext: { page: 2 } },
    code: 'UPSTREAM_FOREIGN_NEXT',
    reason: /evil\.example/,
  },
  {
    name: 'next loop',
    faults: { nextLoop: { page: 3, to: 1 } },
    code: 'UPSTREAM_PAGE_LOOP',
    reason: /page/,
    settings: { SYNC_CONCURRENCY: '1' },
  },
  {
    name: 'request timeout',
    faults: { hang: { page: 2 } },
    code: 'UPSTREAM_TIMEOUT',
    reason: /page=2|page 2|timeout/i,
    settings: { UPSTREAM_TIMEOUT: '300', UPSTREAM_MAX_ATTEMPTS: '1' },
  },
];

describe('a failed crawl changes nothing but its own run record', () => {
  it.each(cases)('$name → $code', async ({ faults, code, reason, settings, addsRows = 0 }) => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 7, count: 30 });
    await sync(store, upstream);
    upstream.data.edit(3);
    upstream.data.add(2);
    const before = storedState(store);

    upstream.faults.set(faults);
    const failure = sync(store, upstream, settings);
    await expect(failure).rejects.toMatchObject({ code });
    expect(storedState(store)).toEqual(before);
    const run = await store.getRun(2);
    expect(run).toMatchObject({ status: 'failed', errorCode: code });
    expect(run?.errorMessage).toMatch(reason);
    expect(upstream.requests.some((r) => r.url.includes('evil.example'))).toBe(false);

    // The next good run succeeds and records the pending changes exactly once.
    upstream.faults.clear();
    const next = await sync(store, upstream);
    expect(next.counts).toMatchObject({ added: 2 + addsRows, changed: 3 });
  });

  it('an empty listing where there were entries is refused, then confirmed by the next run (SYNC_CONFIRM_DROP_AFTER=0s)', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 3, count: 12 });
    await sync(store, upstream);
    const before = storedState(store);
    upstream.faults.set({ emptyListing: true });
    const nextRun = { SYNC_CONFIRM_DROP_AFTER: '0s' };
    await expect(sync(store, upstream, nextRun)).rejects.toMatchObject({ code: 'EMPTY_LISTING_UNCONFIRMED' });
    expect(storedState(store)).toEqual(before);
    expect((await store.getRun(2))?.errorMessage).toMatch(/refusing to record everyone as removed/);
    const confirmed = await sync(store, upstream, nextRun);
    expect(confirmed.counts.removed).toBeGreaterThan(0);
    expect(confirmed.entries).toBe(0);
  });

  it('an empty listing is recorded at once with --allow-empty (SYNC_ALLOW_EMPTY)', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 3, count: 12 });
    const first = await sync(store, upstream);
    upstream.faults.set({ emptyListing: true });
    const emptied = await sync(store, upstream, { SYNC_ALLOW_EMPTY: 'true' });
    expect(emptied.entries).toBe(0);
    expect(emptied.counts.removed).toBe(first.entries);
  });

  it('unordered pagination (DRF #6886) never records a removal on its own', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 5, count: 40, dupRate: 0.2 });
    await sync(store, upstream);
    const before = storedState(store);
    upstream.faults.set({ unordered: { seed: 9 } });
    await expect(sync(store, upstream)).rejects.toMatchObject({ code: 'UPSTREAM_UNSTABLE_ORDER' });
    expect(storedState(store)).toEqual(before);
  });
});

describe('unordered pagination on a first run', () => {
  it('a stable exact copy is confirmed by re-reading only the pages that hold it', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 6, count: 40, dupRate: 0 });
    const rows = upstream.data.entries();
    const copy = rows[3];
    if (!copy) throw new Error('no row 3');
    upstream.data.setEntries([...rows.slice(0, 30), copy, ...rows.slice(30)]);
    const summary = await sync(store, upstream);
    expect(summary.counts.added).toBe(41);
    // 6 pages and page 1 again (nothing tore the crawl), then pages 1 and 4 (the copies' pages) once more.
    const listRequests = upstream.requests.filter((r) => r.method === 'GET');
    expect(listRequests).toHaveLength(7 + 2);
  });

  it('repeats whole entries, which is confirmed by a second crawl and refused when it differs', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 6, count: 40, dupRate: 0 });
    upstream.faults.set({ unordered: { seed: 3 } });
    await expect(sync(store, upstream)).rejects.toMatchObject({ code: 'UPSTREAM_UNSTABLE_ORDER' });
    expect(storedState(store).versions).toEqual([]);
  });
});

describe('a repeated row that replaces another appearance of its uuid', () => {
  it('is confirmed (its pages are read again) before it is stored as a change', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 6, count: 20, dupRate: 0 });
    const rows = upstream.data.entries();
    const x = rows[2];
    if (!x) throw new Error('no row 2');
    const xOther = { ...x, post: `${String(x.post)} (second desk)` };
    upstream.data.setEntries([...rows.slice(0, 12), xOther, ...rows.slice(12)]);
    await sync(store, upstream);
    const before = upstream.requests.filter((r) => r.method === 'GET').length;
    // What an unordered queryset may answer: the second appearance replaced by a copy of the first.
    upstream.data.setEntries([...rows.slice(0, 12), x, ...rows.slice(12)]);
    const summary = await sync(store, upstream);
    expect(summary.counts.changed).toBe(1);
    const gets = upstream.requests.filter((r) => r.method === 'GET').length - before;
    expect(gets).toBe(4 + 2); // three pages and page 1 again, then the two pages holding the copies once more
  });
});

describe('transient faults are retried and the run succeeds', () => {
  it.each<[string, FaultSettingsInput]>([
    ['a burst of 503s', { status5xx: { page: 2, times: 2, status: 503 } }],
    ['429 with Retry-After 1 s', { rateLimit: { page: 3, times: 1, retryAfter: 1 } }],
    ['count drift once (the whole crawl is retried)', { countDrift: { afterPage: 1, add: 1 } }],
  ])('%s', async (_name, faults) => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 8, count: 30 });
    upstream.faults.set(faults);
    const summary = await sync(store, upstream, {
      UPSTREAM_MAX_ATTEMPTS: '4',
      SYNC_MAX_CRAWL_ATTEMPTS: '3',
      SYNC_CONCURRENCY: '1',
    });
    expect(summary.entries).toBe(upstream.data.count);
    expect((await store.getRun(1))?.status).toBe('succeeded');
  });
});
