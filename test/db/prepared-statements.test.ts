import { describe, expect, it } from 'vitest';
import type { MirrorDatabase } from '../../src/db/open.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

/** Counts the statements the connection prepares while `work` runs (the real prepare, counted). */
async function preparesDuring(db: MirrorDatabase, work: () => Promise<unknown>): Promise<number> {
  const sqlite = db.sqlite;
  const original = sqlite.prepare.bind(sqlite);
  let count = 0;
  sqlite.prepare = (source: string) => {
    count += 1;
    return original(source);
  };
  try {
    await work();
  } finally {
    sqlite.prepare = original;
  }
  return count;
}

// Regression (issue 21): every page request prepared its SQL again (4–8 ms of CPU for `/` and `/changes/`).
describe('the pages’ store reads prepare their statements once per connection', () => {
  it('a second round of the page reads prepares nothing', async () => {
    const db = tempDatabase();
    await sync(db, await simulatedUpstream({ seed: 11, count: 20 }));
    const changes = await db.listChanges({ limit: 10 });
    const uuids = changes.map((c) => c.uuid);
    const reads = () =>
      Promise.all([
        db.latestSucceededRunId(),
        db.succeededRunTimes(5),
        db.runFinishTimes([1]),
        db.listingPage(1, 0, 8),
        db.countCoworkers(false),
        db.countCoworkers(true),
        db.findByName('a', 5),
        db.directoryWithRun(),
        db.changeSubjects(changes),
        db.countRuns(),
        db.listRuns({ limit: 5 }),
        db.getRun(1),
        // drizzle-built: prepared again at every call before (issue 21)
        db.listChanges({ limit: 10 }),
        db.listChanges({ limit: 10, kind: 'changed', beforeId: 100 }),
      ]);
    const first = await reads();
    expect(await preparesDuring(db, reads)).toBe(0);
    // Cached statements answer as fresh ones did.
    expect(await reads()).toEqual(first);
    expect(uuids.length).toBe(10);
  });
});
