import { describe, expect, it } from 'vitest';
import { bodyHash } from '../../src/sync/body-hash.js';
import { commitListing, stagedEntries } from '../helpers/store-runs.js';
import { tempDatabase } from '../helpers/temp-db.js';

const uuid = (n: number): string => `6f1c2d3e-0000-4000-8000-${String(n).padStart(12, '0')}`;
const body = (n: number): string => JSON.stringify({ uuid: uuid(n), name: `Person ${n}` });

type Store = ReturnType<typeof tempDatabase>;
const stageIndexes = (store: Store): string[] =>
  store.sqlite
    .prepare(`select sql from sqlite_temp_master where type = 'index' and sql is not null order by name`)
    .pluck()
    .all()
    .map((sql) => String(sql).replace(/^create index/i, 'create index'));

/** The current listing as stored: each position with the body of the version placed there. */
const currentListing = (store: Store): unknown[] =>
  store.sqlite
    .prepare(
      `select lp.position, v.body from listing_positions lp join versions v on v.id = lp.version_id
        where lp.valid_to_run is null order by lp.position`,
    )
    .raw()
    .all();

// Issue 21: a b-tree kept up row by row in random uuid order dominated the 1,000,000-entry first
// sync; the stage builds its uuid indexes with one sort once the crawl is over.
describe('the SQLite stage (issue 21, the 1,000,000-entry first sync)', () => {
  it('stages the crawl without a uuid index and builds it, covering, once the crawl is over', async () => {
    const store = tempDatabase();
    await commitListing(store, [body(1), body(2)]);
    const run = await store.beginRun('http://upstream.invalid');
    const stage = await store.openStage(run.id);
    try {
      await stage.append(stagedEntries([body(3), body(1), body(3)], 8));
      expect(stageIndexes(store)).toEqual(['create index stage_entries_page on stage_entries (page, idx)']);
      await stage.holdCurrent(bodyHash);
      expect(stageIndexes(store)).toEqual([
        'create index stage_current_uuid on stage_current (uuid, pos, version_id, slot, hash)',
        'create index stage_entries_page on stage_entries (page, idx)',
        'create index stage_entries_uuid on stage_entries (uuid, pos, hash)',
      ]);
    } finally {
      await stage.close();
      await store.releaseRun(run.id);
    }
  });

  it('sets its page cache, analysis and sorter threads while a stage is open and gives the connection its own back', async () => {
    const store = tempDatabase();
    const pragmas = (): unknown[] =>
      ['cache_size', 'analysis_limit', 'threads'].map((name) => store.sqlite.pragma(name, { simple: true }));
    const own = pragmas();
    const run = await store.beginRun('http://upstream.invalid');
    const stage = await store.openStage(run.id);
    expect(pragmas()).toEqual([-4000, 1000, 1]);
    await stage.close();
    await store.releaseRun(run.id);
    expect(pragmas()).toEqual(own);
    expect(own).toEqual([-16000, 0, 0]);
  });

  it('gives each new version of a run over a filled store its placement, repeated uuids included', async () => {
    const store = tempDatabase();
    await commitListing(store, [body(1), body(2), body(1)]);
    const edited = JSON.stringify({ uuid: uuid(2), name: 'Person 2, renamed' });
    await commitListing(store, [body(4), body(1), edited, body(4), body(1), body(1)]);
    const listed = currentListing(store);
    expect(listed).toEqual([
      [0, body(4)],
      [1, body(1)],
      [2, edited],
      [3, body(4)],
      [4, body(1)],
      [5, body(1)],
    ]);
  });

  it('numbers new positions that stand together by their offset, with or without a gap in the ids', async () => {
    const store = tempDatabase();
    // A first sync: every position new, from 0 on.
    await commitListing(store, [body(1), body(2), body(1)]);
    // New coworkers at the end only: positions 2..4 new and together.
    await commitListing(store, [body(1), body(2), body(3), body(4), body(5)]);
    expect(currentListing(store)).toEqual([1, 2, 3, 4, 5].map((n, i) => [i, body(n)]));
    // The same with a foreign version written among the run's new ones: the check at the ends
    // refuses the offsets and the lookup places them.
    store.sqlite.exec(`create temp trigger gap after insert on versions
      when new.slot <> 99 and not exists (select 1 from versions where slot = 99)
      begin insert into versions (uuid, slot, body, valid_from_run)
            values ('${uuid(1)}', 99, '{}', new.valid_from_run); end`);
    await commitListing(store, [body(1), body(2), body(3), body(4), body(5), body(6), body(7), body(8)]);
    store.sqlite.exec('drop trigger gap');
    expect(currentListing(store)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n, i) => [i, body(n)]));
  });

  it('places every new version by its lookup when the ids a commit took are not consecutive', async () => {
    const store = tempDatabase();
    await commitListing(store, [body(1), body(2)]);
    // A gap in the middle of the run's new ids: one version more, written between the run's first
    // new version and the rest, so numbering the placements by rank would give them the wrong
    // versions. The check at the ends sees it and the lookup by (uuid, slot, run) places them.
    store.sqlite.exec(`create temp trigger gap after insert on versions
      when new.slot <> 99 and not exists (select 1 from versions where slot = 99)
      begin insert into versions (uuid, slot, body, valid_from_run)
            values ('${uuid(1)}', 99, '{}', new.valid_from_run); end`);
    const edited = JSON.stringify({ uuid: uuid(2), name: 'Person 2, renamed' });
    await commitListing(store, [body(5), edited, body(1), body(6), body(5)]);
    store.sqlite.exec('drop trigger gap');
    const listed = currentListing(store);
    expect(listed).toEqual([
      [0, body(5)],
      [1, edited],
      [2, body(1)],
      [3, body(6)],
      [4, body(5)],
    ]);
    // The gap was there: the extra version sits among the run's new ones.
    const gap = store.sqlite.prepare('select id from versions where slot = 99').pluck().get() as number;
    const after = store.sqlite.prepare('select count(*) from versions where id > ?').pluck().get(gap);
    expect(after).toBeGreaterThan(0);
  });
});
