import { describe, expect, it } from 'vitest';
import { commitListing } from '../helpers/store-runs.js';
import { tempDatabase } from '../helpers/temp-db.js';

const UUID = '6f1c2d3e-0000-4000-8000-000000000001';
const X = JSON.stringify({ uuid: UUID, name: 'Ada Example', post: 'Engineer' });
/** The same fields as X in another key order: another text, another hash. */
const X_REORDERED = JSON.stringify({ name: 'Ada Example', uuid: UUID, post: 'Engineer' });

type Store = ReturnType<typeof tempDatabase>;
const changesOf = async (store: Store, runId: number) =>
  (await store.listChanges({ limit: 100 }))
    .filter((c) => c.runId === runId)
    .map(({ uuid, slot, kind, field, oldValue, newValue }) => ({
      uuid,
      slot,
      kind,
      field,
      oldValue,
      newValue,
    }));

describe('the stored texts the streaming diff reads', () => {
  it('include appearances whose text the new listing repeats: both matched, nothing changed', async () => {
    const store = tempDatabase();
    await commitListing(store, [X, X]);
    // One appearance identical, one by its canonical form.
    const next = await commitListing(store, [X, X_REORDERED]);
    expect(next.counts).toEqual({ added: 0, changed: 0, removed: 0, returned: 0, unchanged: 2 });
    expect(await changesOf(store, next.runId)).toEqual([]);
  });

  it('include the texts of appearances that changed', async () => {
    const store = tempDatabase();
    await commitListing(store, [X]);
    const edited = JSON.stringify({ uuid: UUID, name: 'Ada Example', post: 'Director' });
    const next = await commitListing(store, [edited]);
    expect(await changesOf(store, next.runId)).toEqual([
      { uuid: UUID, slot: 0, kind: 'changed', field: 'post', oldValue: '"Engineer"', newValue: '"Director"' },
    ]);
  });
});
