import { describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { generateCoworkers } from '../../src/simulated-upstream/generate.js';
import { bodyHash } from '../../src/sync/body-hash.js';
import type { DiffCounts } from '../../src/sync/diff.js';
import { diffStaged, diffStagedGroups } from '../../src/sync/stream-diff.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { commitListing, stagedEntries } from '../helpers/store-runs.js';

// A store that never held a coworker (a first sync) is diffed set-based (RunStage.recordFirstListing)
// instead of by uuid groups: issue 21's first sync of 1,000,000 entries spent ≈ 12 s walking groups
// that could only be new. Both ways must store the very same rows, on both stores, and a later run
// must find them as it would have.

/**
 * One run of `bodies` as a sync commits it (`commitListing`), diffed the sync's way or by groups
 * alone; its counts and what the exact-copies confirmation would read of the stage, which must
 * agree whichever way the diff went. `setBased` tells whether the stage's set-based diff decided.
 */
async function commitWith(
  store: Store,
  bodies: readonly string[],
  way: 'sync' | 'groups',
): Promise<{ counts: DiffCounts; copies: { copies: number; pages: number[] }; setBased: boolean }> {
  let copies = { copies: 0, pages: [] as number[] };
  let setBased = false;
  const { counts } = await commitListing(store, bodies, {}, async (stage, store) => {
    const firstListing = vi.spyOn(stage, 'recordFirstListing');
    const counts = await (way === 'groups' ? diffStagedGroups : diffStaged)(stage, store);
    const answer = firstListing.mock.results[0]?.value as Promise<number | null> | undefined;
    setBased = answer !== undefined && (await answer) !== null;
    copies = await stage.exactCopies();
    return counts;
  });
  return { counts, copies, setBased };
}

/** Every row of the history's tables, in key order. */
async function history(store: Store): Promise<Record<string, unknown>[][]> {
  return Promise.all(
    [
      'select uuid, first_seen_run, removed_run, last_seen_run, returned_count, last_returned_run from coworkers order by uuid',
      'select id, uuid, slot, body, body_hash, valid_from_run, valid_to_run from versions order by id',
      'select id, position, version_id, valid_from_run, valid_to_run from listing_positions order by id',
      'select id, run_id, uuid, slot, kind, field, old_value, new_value, version_id from changes order by id',
      'select id, status, added, changed, removed, returned, unchanged, entries from runs order by id',
    ].map((sql) => storeRows(store, sql)),
  );
}

const text = (row: object): string => JSON.stringify(row);

/** Invented listings that make the groups' diff work: repeats, exact copies, one uuid past a chunk. */
function listings(): Record<string, string[]> {
  const rows = generateCoworkers(5, 300, { dupRate: 0.2 }).map(text);
  const one = generateCoworkers(9, 3)[0] ?? {};
  const many = Array.from({ length: 2_501 }, (_, i) => text({ ...one, name: `Desk ${i % 7}` }));
  const [a, b] = rows;
  return {
    'repeated uuids': rows,
    'exact copies between others': a && b ? [a, b, a, ...rows.slice(2, 40), b, a] : [],
    'one uuid listed more often than a chunk holds': [...rows.slice(0, 20), ...many, ...rows.slice(20, 30)],
    'nothing listed': [],
  };
}

describe.each(STORE_KINDS)('the first listing diffed set-based, on %s', (kind) => {
  const fresh = storeMaker(kind);

  for (const [name, bodies] of Object.entries(listings())) {
    it(`stores what the groups' diff stores: ${name}`, async () => {
      const [setBased, byGroups] = [await fresh(), await fresh()];
      const first = await commitWith(setBased, bodies, 'sync');
      const grouped = await commitWith(byGroups, bodies, 'groups');
      // The sync's diff took the set-based way on the empty store; the other store never did.
      expect([first.setBased, grouped.setBased]).toEqual([true, false]);
      expect(grouped.counts).toEqual(first.counts);
      expect(grouped.copies).toEqual(first.copies);
      expect(first.counts.added).toBe(bodies.length);
      expect(await history(setBased)).toEqual(await history(byGroups));

      // A later run (edits, an appearance moved to the end, a new coworker) finds the same state
      // either way.
      const next = [
        ...bodies.slice(1).map((b, i) => (i % 5 === 0 ? b.replace(/"name":"/, '"name":"Dr ') : b)),
      ];
      next.push(...bodies.slice(0, 1), text({ uuid: 'f'.repeat(32), name: 'Someone new' }));
      const later = await commitWith(setBased, next, 'sync');
      // An empty first listing stored no coworker: the next run is still a first listing.
      expect(later.setBased).toBe(bodies.length === 0);
      expect(await commitWith(byGroups, next, 'sync')).toEqual(later);
      expect(await history(setBased)).toEqual(await history(byGroups));
    }, 60_000);
  }

  it('leaves a store that holds only removed coworkers to the groups, recording nothing', async () => {
    const store = await fresh();
    const [first] = listings()['repeated uuids'] ?? [];
    if (first === undefined) throw new Error('no rows');
    await commitWith(store, [first], 'sync');
    await commitWith(store, [], 'sync');
    const before = await history(store);
    const run = await store.beginRun('http://upstream.invalid');
    const stage = await store.openStage(run.id);
    try {
      await stage.append(stagedEntries([first], 8));
      await stage.holdCurrent(bodyHash);
      expect(await stage.recordFirstListing()).toBeNull();
      // The coworker comes back: returned, not added, which only the groups decide.
      expect(await diffStaged(stage, store)).toEqual({
        added: 0,
        changed: 0,
        removed: 0,
        returned: 1,
        unchanged: 0,
      });
    } finally {
      await stage.close();
      await store.releaseRun(run.id);
    }
    expect(await history(store)).toEqual([...before.slice(0, 4), expect.any(Array)]);
  });
});
