import { expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { describePostgres, storeMaker } from '../helpers/postgres.js';
import { commitListing } from '../helpers/store-runs.js';

/**
 * Entries a drifted or hostile upstream could send, as stored texts: names that are not strings,
 * a name absent, escapes jsonb refuses (\u0000), LIKE's own characters, letters outside ASCII, a
 * post longer than a page shows.
 */
const BODIES = [
  '{"uuid":"u1","name":"Ada Lovelace","post":"Engineer"}',
  '{"uuid":"u2","name":"ÉMILE ADA","post":"Ops"}',
  '{"uuid":"u3","name":42,"post":"Numbers"}',
  '{"uuid":"u4","name":{"first":"Ada"},"post":null}',
  '{"uuid":"u5","name":"nul\\u0000ada","post":"x"}',
  `{"uuid":"u6","name":"100% _ada_","post":"${'p'.repeat(400)}"}`,
  '{"uuid":"u7","post":"no name"}',
  '{"uuid":"u8","name":true,"post":["a"]}',
  '{"uuid":"u9","name":"émile","post":"Ops \\"quoted\\""}',
];

/** One run listing every body above, committed as a sync commits. */
async function commitBodies(store: Store): Promise<void> {
  await commitListing(store, BODIES, { finishedAt: '2026-03-02T09:00:00.000Z', pageSize: 100 });
}

describePostgres('names and the directory read in SQL on PostgreSQL, as SQLite reads them', () => {
  const sqliteStore = storeMaker('sqlite');
  const pgStore = storeMaker('postgres');

  it('finds the same coworkers by any text and lists the same directory, whatever the entries hold', async () => {
    const [sqlite, pg] = [await sqliteStore(), await pgStore()];
    for (const store of [sqlite, pg]) await commitBodies(store);

    for (const text of ['ada', 'ADA', '4', '%', '_', 'É', 'é', 'first', 'nul', '"', '']) {
      expect({ text, found: await pg.findByName(text, 50) }).toEqual({
        text,
        found: await sqlite.findByName(text, 50),
      });
    }
    expect(await pg.coworkerDirectory()).toEqual(await sqlite.coworkerDirectory());
    // By name bytes; an object name matches by its JSON text; a NUL ends a name for LIKE.
    expect((await pg.findByName('ada', 50)).map((c) => c.uuid)).toEqual(['u6', 'u1', 'u4', 'u2']);
  });
});
