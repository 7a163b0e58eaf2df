import { describe, expect, it } from 'vitest';
import { respondList, type DrfOptions } from '../../src/drf/respond.js';
import { prepareSnapshot } from '../../src/drf/snapshot.js';
import { AnswerCache } from '../../src/http/answer-cache.js';
import { LIST_PATH } from '../../src/upstream/contract.js';

const options: DrfOptions = { trustProxyHeaders: false, publicBaseUrl: null, cacheControl: null };
// Pages of ~160 KB: a full copy per cached answer would show at once.
const bigSnapshot = prepareSnapshot({
  id: 'big',
  entries: Array.from({ length: 40 }, (_, i) => JSON.stringify({ uuid: `u${i}`, name: 'n'.repeat(20_000) })),
  pageSize: 8,
  optionsBody: null,
  fetchedAt: new Date('2026-11-21T10:00:00Z'),
});

function cacheRequests(cache: AnswerCache, count: number): void {
  for (let i = 0; i < count; i += 1) {
    const url = `${LIST_PATH}?x=${i}&page=2`;
    const headers = { host: 'mirror.test' };
    const key = AnswerCache.key('GET', url, headers, 'http', false);
    if (key === null) throw new Error('uncacheable');
    const answer = respondList({ method: 'GET', url, headers }, bigSnapshot, options);
    const kept = cache.set(bigSnapshot, key, answer);
    expect(cache.get(bigSnapshot, key)).toBe(kept);
    expect(Buffer.concat(kept.body).equals(Buffer.concat(answer.body))).toBe(true);
  }
}

describe('the list answer cache', () => {
  it('regression: 300 distinct ?x=i on big pages cost their heads, not 300 copies of the page', () => {
    const cache = new AnswerCache(32 * 1024 * 1024);
    cacheRequests(cache, 300);
    const pageBytes = bigSnapshot.pageTails[1]?.length ?? 0;
    expect(pageBytes).toBeGreaterThan(150_000);
    // Every answer is cached at under 2 KiB each: 300 copies would be 300 × 160 KB = 48 MB.
    expect(cache.bytes).toBeLessThan(300 * 2048);
    expect(cache.bytes).toBeLessThan(pageBytes * 4);
  });

  it('never holds more than its byte budget: the oldest answers go first', () => {
    const budget = 64 * 1024;
    const cache = new AnswerCache(budget);
    cacheRequests(cache, 300);
    expect(cache.bytes).toBeLessThanOrEqual(budget);
    expect(cache.bytes).toBeGreaterThan(budget / 2);
    const first = AnswerCache.key('GET', `${LIST_PATH}?x=0&page=2`, { host: 'mirror.test' }, 'http', false);
    const last = AnswerCache.key('GET', `${LIST_PATH}?x=299&page=2`, { host: 'mirror.test' }, 'http', false);
    expect(cache.get(bigSnapshot, first ?? '')).toBeUndefined();
    expect(cache.get(bigSnapshot, last ?? '')).toBeDefined();
  });

  it('charges answers whose body is their own (indented JSON) in full, and skips one over budget', () => {
    const cache = new AnswerCache(100_000);
    const url = `${LIST_PATH}?page=2`;
    const headers = { host: 'mirror.test', accept: 'application/json; indent=2' };
    const key = AnswerCache.key('GET', url, headers, 'http', false) ?? '';
    cache.set(bigSnapshot, key, respondList({ method: 'GET', url, headers }, bigSnapshot, options));
    expect(cache.get(bigSnapshot, key)).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it('joins a small page into one buffer (one write), charged in full', () => {
    const small = prepareSnapshot(bigSnapshotInput());
    const cache = new AnswerCache(1024 * 1024);
    const url = `${LIST_PATH}?page=1`;
    const headers = { host: 'mirror.test' };
    const answer = respondList({ method: 'GET', url, headers }, small, options);
    expect(answer.body).toHaveLength(2);
    const kept = cache.set(small, AnswerCache.key('GET', url, headers, 'http', false) ?? '', answer);
    expect(kept.body).toHaveLength(1);
    expect(kept.body[0]?.equals(Buffer.concat(answer.body))).toBe(true);
    expect(cache.bytes).toBeGreaterThan(kept.body[0]?.length ?? 0);
  });

  it('empties when the served snapshot changes, and never answers for another snapshot', () => {
    const cache = new AnswerCache(1024 * 1024);
    cacheRequests(cache, 3);
    expect(cache.bytes).toBeGreaterThan(0);
    const other = prepareSnapshot({ ...bigSnapshotInput(), id: 'other' });
    const key =
      AnswerCache.key('GET', `${LIST_PATH}?x=1&page=2`, { host: 'mirror.test' }, 'http', false) ?? '';
    expect(cache.get(other, key)).toBeUndefined();
    cache.follow(bigSnapshot);
    cache.follow(other);
    expect(cache.bytes).toBe(0);
    expect(cache.get(bigSnapshot, key)).toBeUndefined();
  });
});

function bigSnapshotInput(): Parameters<typeof prepareSnapshot>[0] {
  return {
    id: 'small',
    entries: [JSON.stringify({ uuid: 'u' })],
    pageSize: 8,
    optionsBody: null,
    fetchedAt: new Date('2026-11-21T10:00:00Z'),
  };
}
