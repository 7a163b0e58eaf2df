import { expect, it } from 'vitest';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

// Storage grows with changes, not with runs: an unchanged run adds its run record and nothing else.
it('an unchanged run grows the database by at most 1 KiB (averaged over 40 runs)', async () => {
  const store = tempDatabase();
  const upstream = await simulatedUpstream({ seed: 2, count: 200 });
  await sync(store, upstream);
  const used = () => {
    store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    // Bytes actually used by rows and indexes, not pages the file happens to hold.
    return (store.sqlite.prepare('select sum(pgsize - unused) as used from dbstat').get() as { used: number })
      .used;
  };
  const before = used();
  const rowsBefore = store.sqlite
    .prepare(
      'select (select count(*) from versions) + (select count(*) from changes) + (select count(*) from listing_positions) as n',
    )
    .get();
  const runs = 40;
  for (let i = 0; i < runs; i++) await sync(store, upstream);
  const perRun = (used() - before) / runs;
  expect(
    store.sqlite
      .prepare(
        'select (select count(*) from versions) + (select count(*) from changes) + (select count(*) from listing_positions) as n',
      )
      .get(),
  ).toEqual(rowsBefore);
  expect(perRun).toBeLessThanOrEqual(1024);
  console.log(`database growth per unchanged run: ${perRun.toFixed(0)} bytes`);
});
