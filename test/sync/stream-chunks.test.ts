import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

/** The listing served now, as uuids in order. */
async function servedUuids(store: Store): Promise<string[]> {
  const run = await store.latestSucceededRun();
  if (!run) return [];
  return (await store.listingAt(run)).entries.map((e) => (JSON.parse(e) as { uuid: string }).uuid);
}

describe('the streaming diff walks uuid groups in chunks', () => {
  it('keeps a uuid listed more times than a chunk holds in one group, and diffs it like any other', async () => {
    // 3,000 coworkers, one of them listed 2,501 times: more than a chunk's 2,000 rows a side.
    const upstream = await simulatedUpstream({ seed: 7, count: 3000 });
    const [repeated] = upstream.data.entries().map((e) => (e as { uuid: string }).uuid);
    if (repeated === undefined) throw new Error('no entries');
    for (let i = 0; i < 2500; i++) upstream.data.duplicate(repeated);
    const store = tempDatabase();

    const first = await sync(store, upstream);
    expect(first.counts).toEqual({ added: 5500, changed: 0, removed: 0, returned: 0, unchanged: 0 });
    expect(await servedUuids(store)).toStrictEqual(
      upstream.data.entries().map((e) => (e as { uuid: string }).uuid),
    );

    const unchanged = await sync(store, upstream);
    expect(unchanged.counts).toEqual({ added: 0, changed: 0, removed: 0, returned: 0, unchanged: 5500 });

    upstream.data.edit(25);
    upstream.data.remove(5);
    upstream.data.add(5);
    const next = await sync(store, upstream);
    expect(next.counts.changed + next.counts.removed + next.counts.added).toBeGreaterThan(0);
    expect(await servedUuids(store)).toStrictEqual(
      upstream.data.entries().map((e) => (e as { uuid: string }).uuid),
    );
    // The changes recorded are the counts the run reports, one row per appearance added or removed.
    const rows = (await store.listChanges({ limit: 10_000 })).filter((r) => r.runId === next.runId);
    expect(rows.filter((r) => r.kind === 'added')).toHaveLength(next.counts.added);
    expect(rows.filter((r) => r.kind === 'removed')).toHaveLength(next.counts.removed);
  }, 120_000);
});
