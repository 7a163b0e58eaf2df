import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { commitListing } from '../helpers/store-runs.js';

// The change feed filtered by kind: after a first sync, later additions are few among a history of
// edits, and a filter on `added` that walks the ids to find them reads most of the table. Every
// kind, `added` included, is found through changes_kind_idx (kind, id).

const uuid = (n: number): string => n.toString(36).padStart(32, '0');
const body = (n: number, state: number): string => JSON.stringify({ uuid: uuid(n), post: `post ${state}` });

/** Five coworkers edited over ten runs, then one more joins. */
async function history(store: Store): Promise<void> {
  const team = [1, 2, 3, 4, 5];
  for (let run = 0; run < 10; run++)
    await commitListing(
      store,
      team.map((n) => body(n, run)),
    );
  await commitListing(store, [...team.map((n) => body(n, 9)), body(6, 0)]);
}

describe.each(STORE_KINDS)('the change feed filtered by kind, on %s', (kind) => {
  const fresh = storeMaker(kind);
  const withHistory = async (): Promise<Store> => {
    const store = await fresh();
    await history(store);
    return store;
  };

  it('answers each kind in id order, newest first', async () => {
    const store = await withHistory();
    const added = await store.listChanges({ kind: 'added', limit: 10 });
    expect(added.map((c) => c.uuid)).toEqual([6, 5, 4, 3, 2, 1].map(uuid));
    const changed = await store.listChanges({ kind: 'changed', limit: 3 });
    expect(changed.map((c) => [c.kind, c.field])).toEqual([
      ['changed', 'post'],
      ['changed', 'post'],
      ['changed', 'post'],
    ]);
  });

  it('keeps every kind in changes_kind_idx, `added` too', async () => {
    const store = await withHistory();
    if (kind === 'sqlite') {
      const plan = await storeRows(
        store,
        "explain query plan select id from changes where kind = 'added' order by id desc limit 51",
      );
      expect(plan.map((step) => step.detail)).toEqual([
        'SEARCH changes USING COVERING INDEX changes_kind_idx (kind=?)',
      ]);
      return;
    }
    // A table this small is read whole by PostgreSQL's planner whatever its indexes: the index itself
    // says it covers every row.
    const [index] = await storeRows(
      store,
      "select indexdef from pg_indexes where indexname = 'changes_kind_idx'",
    );
    expect(index?.indexdef).toBe('CREATE INDEX changes_kind_idx ON public.changes USING btree (kind, id)');
  });
});
