import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { generateCoworkers } from '../../src/simulated-upstream/generate.js';
import { bodyHash } from '../../src/sync/body-hash.js';
import type { DiffCounts } from '../../src/sync/diff.js';
import { diffStaged, diffStagedGroups } from '../../src/sync/stream-diff.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { stagedEntries } from '../helpers/store-runs.js';

// A store that never held a coworker (a first sync) is diffed set-based (RunStage.recordFirstListing)
// instead of by uuid groups: issue 21's first sync of 1,000,000 entries spent ≈ 12 s walking groups
// that could only be new. Both ways must store the very same rows, on both stores, and a later run
// must find them as it would have.

type Diff = 'first-listing' | 'groups' | 'default';

/** One run of `bodies` through the stage, its diff made one of three ways. */
async function commitWith(
  store: Store,
  bodies: readonly string[],
  diff: Diff,
): Promise<{ counts: DiffCounts; copies: { copies: number; pages: number[] } }> {
  const run = await store.beginRun('http://upstream.invalid');
  const stage = await store.openStage(run.id);
  try {
    await stage.append(stagedEntries(bodies, 8));
    await stage.holdCurrent(bodyHash);
    let counts: DiffCounts;
    if (diff === 'first-listing') {
      const added = await stage.recordFirstListing();
      if (added === null) throw new Error('the store was expected to hold no coworker');
      counts = { added, changed: 0, removed: 0, returned: 0, unchanged: 0 };
    } else {
      counts = await (diff === 'groups' ? diffStagedGroups : diffStaged)(stage, store);
    }
    // What a sync confirms with reads the stage too: it must agree whichever way the diff went.
    const copies = await stage.exactCopies();
    await stage.commit({
      runId: run.id,
      finishedAt: '2026-11-28T00:00:00.000Z',
      counts: { ...counts },
      pages: Math.max(1, Math.ceil(bodies.length / 8)),
      pageSize: 8,
      optionsBody: null,
      unknownFields: [],
      media: null,
      outbox: null,
    });
    return { counts, copies };
  } finally {
    await stage.close();
    await store.releaseRun(run.id);
  }
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
      const first = await commitWith(setBased, bodies, 'first-listing');
      expect(await commitWith(byGroups, bodies, 'groups')).toEqual(first);
      expect(first.counts.added).toBe(bodies.length);
      expect(await history(setBased)).toEqual(await history(byGroups));

      // A later run (edits, a removal, an addition, a repeat) finds the same state either way.
      const next = [
        ...bodies.slice(1).map((b, i) => (i % 5 === 0 ? b.replace(/"name":"/, '"name":"Dr ') : b)),
      ];
      next.push(...bodies.slice(0, 1), text({ uuid: 'f'.repeat(32), name: 'Someone new' }));
      expect(await commitWith(setBased, next, 'default')).toEqual(
        await commitWith(byGroups, next, 'default'),
      );
      expect(await history(setBased)).toEqual(await history(byGroups));
    }, 60_000);
  }

  it('leaves a store that holds only removed coworkers to the groups, recording nothing', async () => {
    const store = await fresh();
    const [first] = listings()['repeated uuids'] ?? [];
    if (first === undefined) throw new Error('no rows');
    await commitWith(store, [first], 'default');
    await commitWith(store, [], 'default');
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
