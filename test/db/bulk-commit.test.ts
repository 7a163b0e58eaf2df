import { describe, expect, it } from 'vitest';
import { checkRunReferences } from '../../src/db/sqlite/bulk-commit.js';
import { commitListing } from '../helpers/store-runs.js';
import { tempDatabase } from '../helpers/temp-db.js';

const uuid = (n: number): string => `7a2b3c4d-0000-4000-8000-${String(n).padStart(12, '0')}`;
const body = (n: number): string => JSON.stringify({ uuid: uuid(n), name: `Person ${n}` });
const missing = '7a2b3c4d-dead-4000-8000-000000000000';

type Store = ReturnType<typeof tempDatabase>;
const foreignKeys = (store: Store): unknown => store.sqlite.pragma('foreign_keys', { simple: true });
const count = (store: Store, table: string): unknown =>
  store.sqlite.prepare(`select count(*) from ${table}`).pluck().get();

/** Runs `change` with foreign keys off, then the commit's own check of run `runId`, in one rolled back transaction. */
function checkAfter(store: Store, runId: number, change: string): () => void {
  return () => {
    store.sqlite.pragma('foreign_keys = OFF');
    try {
      store.sqlite
        .transaction(() => {
          store.sqlite.exec(change);
          checkRunReferences(store.sqlite, runId);
          throw new Error('clean');
        })
        .immediate();
    } finally {
      store.sqlite.pragma('foreign_keys = ON');
    }
  };
}

// Issue 21: a first sync's commit runs with foreign keys off and checks the same references
// itself, set-based; SQLite's row-by-row lookups in random uuid order cost 11 s of 25 s at 1,000,000.
describe("a first sync's commit, foreign keys checked set-based (issue 21)", () => {
  it('stores a first and a second listing whole, every reference holding, foreign keys on again', async () => {
    const store = tempDatabase();
    await commitListing(store, [body(1), body(2), body(1), body(3)]);
    expect(foreignKeys(store)).toBe(1);
    await commitListing(store, [body(2), body(1), body(4)]);
    expect(foreignKeys(store)).toBe(1);
    expect(store.sqlite.pragma('foreign_key_check')).toEqual([]);
    expect(count(store, 'versions')).toBe(5);
  });

  it('fails a first sync whose commit would leave a reference dangling, and stores nothing of it', async () => {
    const store = tempDatabase();
    // A version of a coworker that does not exist, written inside the commit: with foreign keys
    // on, SQLite itself refuses it; here the commit's own check must.
    store.sqlite.exec(`create trigger orphan after insert on versions
      when new.uuid <> '${missing}' and not exists (select 1 from versions where uuid = '${missing}')
      begin insert into versions (uuid, slot, body, valid_from_run) values ('${missing}', 0, '{}', new.valid_from_run); end`);
    await expect(commitListing(store, [body(1), body(2)])).rejects.toMatchObject({
      code: 'DB_ERROR',
      message: expect.stringContaining('a version refers to a coworker that does not exist') as unknown,
    });
    store.sqlite.exec('drop trigger orphan');
    expect(foreignKeys(store)).toBe(1);
    expect([count(store, 'versions'), count(store, 'coworkers'), count(store, 'changes')]).toEqual([0, 0, 0]);
    expect(store.sqlite.prepare('select status from runs').pluck().all()).toEqual(['failed']);
    // The next run stores the listing whole.
    await commitListing(store, [body(1), body(2)]);
    expect(count(store, 'versions')).toBe(2);
  });

  it('names each reference that would not hold', async () => {
    const store = tempDatabase();
    const { runId } = await commitListing(store, [body(1), body(2)]);
    const cases: [change: string, what: string][] = [
      [
        `insert into versions (uuid, slot, body, valid_from_run) values ('${missing}', 0, '{}', ${runId})`,
        'a version refers to a coworker that does not exist',
      ],
      [
        `insert into listing_positions (position, version_id, valid_from_run) values (9, 424242, ${runId})`,
        'a listing position refers to a version that does not exist',
      ],
      [
        `insert into changes (run_id, uuid, slot, kind, version_id) values (${runId}, '${uuid(1)}', 0, 'added', 424242)`,
        'a change refers to a version that does not exist',
      ],
      [
        `update coworkers set removed_run = ${runId}, last_seen_run = 424242 where uuid = '${uuid(1)}'`,
        'a removed coworker refers to a last seen run that does not exist',
      ],
    ];
    for (const [change, what] of cases) {
      expect(checkAfter(store, runId, change)).toThrow(what);
    }
    // Nothing dangling: the check passes, and with foreign keys on it leaves the check to SQLite.
    expect(checkAfter(store, runId, 'select 1')).toThrow('clean');
    expect(() => checkRunReferences(store.sqlite, runId)).not.toThrow();
  });
});
