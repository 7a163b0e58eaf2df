import { expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { bodyHash } from '../../src/sync/body-hash.js';
import { describePostgres, storeMaker } from '../helpers/postgres.js';

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

/** One run listing every body above, through the store's own commit. */
async function commitBodies(store: Store): Promise<void> {
  const run = await store.beginRun('http://upstream.invalid');
  const uuids = BODIES.map((body) => (JSON.parse(body) as { uuid: string }).uuid);
  await store.commitRun({
    runId: run.id,
    finishedAt: '2026-03-02T09:00:00.000Z',
    diff: {
      placements: BODIES.map((body, i) => ({
        kind: 'new' as const,
        uuid: uuids[i] ?? '',
        slot: 0,
        body,
        hash: bodyHash(body),
      })),
      closedVersionIds: [],
      events: BODIES.map((body, i) => ({
        uuid: uuids[i] ?? '',
        slot: 0,
        kind: 'added' as const,
        field: null,
        oldValue: null,
        newValue: body,
      })),
      newCoworkers: uuids,
      removedCoworkers: [],
      returnedCoworkers: [],
      counts: { added: BODIES.length, changed: 0, removed: 0, returned: 0, unchanged: 0 },
    },
    positions: [],
    pages: 1,
    pageSize: 100,
    optionsBody: null,
    unknownFields: [],
    media: null,
    outbox: null,
  });
  await store.releaseRun(run.id);
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
