import { describe, expect, it } from 'vitest';
import { CHANGE_VERSION_JOIN, newValueSql, oldValueSql } from '../../src/db/change-columns.js';
import { tempDatabase } from '../helpers/temp-db.js';
import { simulatedUpstream, storedState, sync } from '../helpers/sync.js';

const u = (c: string) => c.repeat(32);
const A = u('a');
const B = u('b');
const C = u('c');
const MEDIA = 'http://127.0.0.1:8766/media/';

function entry(uuid: string, name: string, post: string, extra: Record<string, unknown> = {}) {
  return {
    uuid,
    name,
    post,
    emoji_file: `${MEDIA}e/${name}.png`,
    emoji_file_webm: null,
    show_image: true,
    images: [],
    ...extra,
  };
}

type Store = ReturnType<typeof tempDatabase>;
const versionsTable = (store: Store) =>
  store.sqlite
    .prepare(
      'select uuid, slot, json_extract(body, \'$.post\') as post, valid_from_run as "from", valid_to_run as "to" from versions order by id',
    )
    .all();
interface ChangeRow {
  run: number;
  uuid: string;
  slot: number;
  kind: string;
  field: string | null;
  old: string | null;
  new: string | null;
}
const changesTable = (store: Store) =>
  store.sqlite
    .prepare(
      // An added, returned or removed change keeps its entry in the version it names (body_once).
      `select c.run_id as run, c.uuid, c.slot, c.kind, c.field, ${oldValueSql('c', 'v')} as old,
              ${newValueSql('c', 'v')} as new from changes c ${CHANGE_VERSION_JOIN} order by c.id`,
    )
    .all() as ChangeRow[];
const coworkersTable = (store: Store) =>
  store.sqlite
    .prepare(
      'select uuid, first_seen_run as first, removed_run as removed, last_seen_run as lastSeen, returned_count as returned from coworkers order by uuid',
    )
    .all();
const servedListing = async (store: Store) => {
  const run = await store.latestSucceededRun();
  return run
    ? (await store.listingAt(run)).entries
        .map((e) => JSON.parse(e) as { uuid: string; post: string })
        .map((e) => `${e.uuid[0]}:${e.post}`)
    : [];
};

describe('runSync: a multi-run scenario, whole tables after each run', () => {
  it('add, unchanged, edit + add + reorder, remove, return, repeated uuid', async () => {
    const store = tempDatabase();
    const a1 = entry(A, 'Ann', 'Dev');
    const a2 = entry(A, 'Ann', 'Lead', { show_image: false });
    const b = entry(B, 'Bo', 'QA');
    const upstream = await simulatedUpstream({ entries: [a1, b, a2], pageSize: 2 });

    // Run 1: three appearances of two coworkers, A twice with different fields.
    const r1 = await sync(store, upstream);
    expect(r1.counts).toEqual({ added: 3, changed: 0, removed: 0, returned: 0, unchanged: 0 });
    expect(versionsTable(store)).toEqual([
      { uuid: A, slot: 0, post: 'Dev', from: 1, to: null },
      { uuid: B, slot: 0, post: 'QA', from: 1, to: null },
      { uuid: A, slot: 1, post: 'Lead', from: 1, to: null },
    ]);
    expect(changesTable(store).map((c) => [c.run, c.uuid, c.slot, c.kind])).toEqual([
      [1, A, 0, 'added'],
      [1, B, 0, 'added'],
      [1, A, 1, 'added'],
    ]);
    expect(await servedListing(store)).toEqual(['a:Dev', 'b:QA', 'a:Lead']);

    // Run 2: nothing changed: only the run row is written.
    const before = storedState(store);
    const r2 = await sync(store, upstream);
    expect(r2.counts).toEqual({ added: 0, changed: 0, removed: 0, returned: 0, unchanged: 3 });
    expect(storedState(store)).toEqual(before);

    // Run 3: B's post edited, C added at the start, the two A appearances swap places.
    const b2 = { ...b, post: 'qa lead' };
    const c = entry(C, 'Cy', 'Ops');
    upstream.data.setEntries([c, a2, b2, a1]);
    const r3 = await sync(store, upstream);
    expect(r3.counts).toEqual({ added: 1, changed: 1, removed: 0, returned: 0, unchanged: 2 });
    expect(changesTable(store).slice(3)).toEqual([
      { run: 3, uuid: C, slot: 0, kind: 'added', field: null, old: null, new: JSON.stringify(c) },
      { run: 3, uuid: B, slot: 0, kind: 'changed', field: 'post', old: '"QA"', new: '"qa lead"' },
    ]);
    expect(versionsTable(store)).toEqual([
      { uuid: A, slot: 0, post: 'Dev', from: 1, to: null },
      { uuid: B, slot: 0, post: 'QA', from: 1, to: 3 },
      { uuid: A, slot: 1, post: 'Lead', from: 1, to: null },
      { uuid: C, slot: 0, post: 'Ops', from: 3, to: null },
      { uuid: B, slot: 0, post: 'qa lead', from: 3, to: null },
    ]);
    expect(await servedListing(store)).toEqual(['c:Ops', 'a:Lead', 'b:qa lead', 'a:Dev']);

    // Run 4: A leaves (both appearances; removals come in the previous listing's order).
    upstream.data.setEntries([c, b2]);
    const r4 = await sync(store, upstream);
    expect(r4.counts).toEqual({ added: 0, changed: 0, removed: 2, returned: 0, unchanged: 2 });
    expect(changesTable(store).slice(5)).toEqual([
      { run: 4, uuid: A, slot: 1, kind: 'removed', field: null, old: JSON.stringify(a2), new: null },
      { run: 4, uuid: A, slot: 0, kind: 'removed', field: null, old: JSON.stringify(a1), new: null },
    ]);
    expect(coworkersTable(store)).toEqual([
      { uuid: A, first: 1, removed: 4, lastSeen: 3, returned: 0 },
      { uuid: B, first: 1, removed: null, lastSeen: null, returned: 0 },
      { uuid: C, first: 3, removed: null, lastSeen: null, returned: 0 },
    ]);

    // Run 5: A returns, once, with a new post.
    const a3 = entry(A, 'Ann', 'CTO');
    upstream.data.setEntries([a3, c, b2]);
    const r5 = await sync(store, upstream);
    expect(r5.counts).toEqual({ added: 0, changed: 0, removed: 0, returned: 1, unchanged: 2 });
    expect(changesTable(store).slice(7)).toEqual([
      { run: 5, uuid: A, slot: 0, kind: 'returned', field: null, old: null, new: JSON.stringify(a3) },
    ]);
    expect(coworkersTable(store)[0]).toEqual({ uuid: A, first: 1, removed: null, lastSeen: 3, returned: 1 });
    expect(await servedListing(store)).toEqual(['a:CTO', 'c:Ops', 'b:qa lead']);

    // Every past listing can still be rebuilt exactly.
    const listingOf = async (id: number) => {
      const run = await store.getRun(id);
      if (!run) throw new Error(`no run ${id}`);
      return (await store.listingAt({ ...run, optionsBodyId: null })).entries.length;
    };
    expect(await Promise.all([1, 2, 3, 4, 5].map(listingOf))).toEqual([3, 3, 4, 2, 3]);
  });

  it('keeps unknown fields and key order exactly as received, and reports them', async () => {
    const store = tempDatabase();
    const odd = {
      uuid: A,
      extra_first: 1,
      name: 'Ann',
      post: 'Dev',
      emoji_file: null,
      emoji_file_webm: null,
      show_image: true,
      images: [],
      badge: { x: [1, 'é'] },
    };
    const upstream = await simulatedUpstream({ entries: [odd] });
    const summary = await sync(store, upstream);
    expect(summary.unknownFields).toEqual(['extra_first', 'badge']);
    const run = await store.latestSucceededRun();
    expect(run && (await store.listingAt(run)).entries).toEqual([JSON.stringify(odd)]);
    expect(run?.unknownFields).toContain('badge');
  });

  it('a second sync while one holds the lock says which run holds it', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ count: 30 });
    upstream.faults.set({ latency: 50 });
    const first = sync(store, upstream, { SYNC_CONCURRENCY: '1' });
    await new Promise((r) => setTimeout(r, 20));
    await expect(sync(store, upstream)).rejects.toMatchObject({ code: 'SYNC_LOCKED', details: { runId: 1 } });
    await first;
  });
});
