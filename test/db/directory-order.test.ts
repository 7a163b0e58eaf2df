import { describe, expect, it } from 'vitest';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { commitListing } from '../helpers/store-runs.js';

const body = (uuid: string, name: string): string => JSON.stringify({ uuid, name, post: 'Ops' });

describe.each(STORE_KINDS)('the directory on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('lists present and departed coworkers in one order, by uuid then appearance', async () => {
    const store = await fresh();
    await commitListing(store, [body('b', 'Bea'), body('a', 'Ada'), body('c', 'Cy'), body('a', 'Ada two')]);
    // `a` leaves (both appearances), `b` and `c` stay: a departed coworker sorts among the present.
    const { runId } = await commitListing(store, [body('c', 'Cy'), body('b', 'Bea')]);
    const { entries, runId: directoryRun } = await store.directoryWithRun();
    expect(directoryRun).toBe(runId);
    expect(entries.map((e) => [e.uuid, e.appearance, e.name, e.removedRun])).toEqual([
      ['a', 0, 'Ada', runId],
      ['a', 1, 'Ada two', runId],
      ['b', 0, 'Bea', null],
      ['c', 0, 'Cy', null],
    ]);
    expect(await store.coworkerDirectory()).toEqual(entries);
  });
});
