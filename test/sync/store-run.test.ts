import { describe, expect, it } from 'vitest';
import { bodyHash } from '../../src/sync/body-hash.js';
import { diffListing } from '../../src/sync/diff.js';
import { loadCurrentState } from '../../src/sync/store-run.js';
import { tempDatabase } from '../helpers/temp-db.js';

const UUID = '6f1c2d3e-0000-4000-8000-000000000001';
const X = JSON.stringify({ uuid: UUID, name: 'Ada Example', post: 'Engineer' });
/** The same fields as X in another key order: another text, another hash. */
const X_REORDERED = JSON.stringify({ name: 'Ada Example', uuid: UUID, post: 'Engineer' });
const entry = (json: string) => ({ uuid: UUID, json, hash: bodyHash(json) });

/** Stores one succeeded run listing `texts` (one coworker, one appearance per text). */
async function storeListing(store: ReturnType<typeof tempDatabase>, texts: string[]): Promise<void> {
  const run = await store.beginRun('http://upstream.invalid');
  await store.commitRun({
    runId: run.id,
    finishedAt: new Date().toISOString(),
    diff: {
      placements: texts.map((body, slot) => ({ kind: 'new', uuid: UUID, slot, body, hash: bodyHash(body) })),
      closedVersionIds: [],
      events: [],
      newCoworkers: [UUID],
      removedCoworkers: [],
      returnedCoworkers: [],
      counts: { added: 1, changed: 0, removed: 0, returned: 0, unchanged: 0 },
    },
    positions: [],
    pages: 1,
    pageSize: 8,
    optionsBody: null,
    unknownFields: [],
    media: null,
    outbox: null,
  });
  await store.releaseRun(run.id);
}

describe('the diff inputs the store reads up front', () => {
  it('give every stored text the diff asks for, including appearances whose text the new listing repeats', async () => {
    const store = tempDatabase();
    await storeListing(store, [X, X]);
    const listing = [entry(X), entry(X_REORDERED)];
    const state = await loadCurrentState(store, listing);
    const stored = store.sqlite.prepare('select id, body from versions order by id').all() as {
      id: number;
      body: string;
    }[];
    for (const { id, body } of stored) expect(state.bodyOf(id)).toBe(body);
    // Both appearances are matched (one identical, one by its canonical form): nothing changed.
    const diff = diffListing({
      current: state.appearances,
      known: state.known,
      listing,
      bodyOf: state.bodyOf,
    });
    expect(diff.counts).toEqual({ added: 0, changed: 0, removed: 0, returned: 0, unchanged: 2 });
    expect(diff.events).toEqual([]);
  });

  it('read the texts of appearances that left or changed', async () => {
    const store = tempDatabase();
    await storeListing(store, [X]);
    const edited = JSON.stringify({ uuid: UUID, name: 'Ada Example', post: 'Director' });
    const state = await loadCurrentState(store, [entry(edited)]);
    const [appearance] = state.appearances;
    expect(appearance && state.bodyOf(appearance.versionId)).toBe(X);
    const diff = diffListing({
      current: state.appearances,
      known: state.known,
      listing: [entry(edited)],
      bodyOf: state.bodyOf,
    });
    expect(diff.events).toEqual([
      { uuid: UUID, slot: 0, kind: 'changed', field: 'post', oldValue: '"Engineer"', newValue: '"Director"' },
    ]);
  });
});
