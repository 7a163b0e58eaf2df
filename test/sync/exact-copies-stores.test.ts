import { describe, expect, it } from 'vitest';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';

// An exact copy of an entry (DRF #6886's repeated row) is confirmed by reading again the pages
// that hold its appearances, found by its uuid in the stage (issue 21: equal texts name one uuid).
// The stage's SQL is shared by both stores, so both are asked.
describe.each(STORE_KINDS)('exact copies on a first run, on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('reads again exactly the pages that hold a copy, for two copies of two uuids', async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ seed: 6, count: 40, dupRate: 0 });
    const rows = upstream.data.entries();
    const [a, b] = [rows[3], rows[17]];
    if (!a || !b) throw new Error('too few rows');
    // a on pages 1 and 4 (positions 3 and 30) and, with another text, on page 5 (position 35), which
    // holds no copy; b on pages 3 and 6 (positions 17 and 42).
    const aElsewhere = { ...a, name: `${String(a.name)} (second desk)` };
    upstream.data.setEntries([
      ...rows.slice(0, 30),
      a,
      ...rows.slice(30, 34),
      aElsewhere,
      ...rows.slice(34),
      b,
    ]);
    const summary = await sync(store, upstream);
    expect(summary.counts.added).toBe(43);
    const gets = upstream.requests.filter((r) => r.method === 'GET').map((r) => r.url);
    // 6 pages and page 1 again (the crawl's check that nothing tore it), then the copies' pages
    // once more, in page order.
    expect(gets).toHaveLength(7 + 4);
    expect(gets.slice(7).map((url) => new URL(url, 'http://x').searchParams.get('page') ?? '1')).toEqual([
      '1',
      '3',
      '4',
      '6',
    ]);
  });

  it('reads nothing again when a uuid is repeated with different texts', async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ seed: 6, count: 40, dupRate: 0 });
    const rows = upstream.data.entries();
    const a = rows[3];
    if (!a) throw new Error('too few rows');
    upstream.data.setEntries([...rows, { ...a, name: `${String(a.name)} (second desk)` }]);
    const summary = await sync(store, upstream);
    expect(summary.counts.added).toBe(41);
    // 6 pages and page 1 again.
    expect(upstream.requests.filter((r) => r.method === 'GET')).toHaveLength(7);
  });
});
