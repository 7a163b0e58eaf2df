import { describe, expect, it } from 'vitest';
import type { ChangeStreamFilter } from '../../src/db/change-batches.js';
import * as lines from '../../src/db/change-lines.js';
import type { Store } from '../../src/db/store.js';
import { STORE_KINDS, storeRows } from '../helpers/postgres.js';
import { storeWithChangeRows } from '../helpers/store-runs.js';

const ROWS = 300;

/** Every batch of `filter` both ways: the store's lines and the lines of its rows, side by side. */
async function bothWays(store: Store, filter: ChangeStreamFilter, batchSize: number) {
  const found: { db: Buffer; rows: Buffer; count: number; lastId: number | undefined; ids: number[] }[] = [];
  let beforeId = filter.beforeId;
  for (;;) {
    const batch = { ...filter, limit: batchSize, ...(beforeId === undefined ? {} : { beforeId }) };
    const rows = await store.listChanges(batch);
    const db = await store.changeLines(batch);
    const expected = lines.changeLinesOf(rows);
    found.push({
      db: Buffer.from(db.text),
      rows: Buffer.from(expected.text),
      count: db.count,
      lastId: db.lastId,
      ids: rows.map((r) => r.id),
    });
    if (rows.length < batchSize) return found;
    beforeId = rows.at(-1)?.id;
  }
}

/** A SQL string literal of `text`, for either dialect. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Stored values V8 would write otherwise, or that are no single JSON value, and some it writes as they are. */
const ODD_TEXTS = [
  ' "x"',
  '"\\u00e9"',
  '"\\/"',
  '1.0',
  '1e3',
  '12345678901234567890',
  '-0',
  '{"a":1,"a":2}',
  `${'['.repeat(600)}${']'.repeat(600)}`,
  '{"7":1,"a":2}',
  // Written as they are: the scan's own, and V8's round trip past what the scan judges.
  '"\u2028 Zoë"',
  '[1,2.5,{"b":-3e-7}]',
];

describe.each(STORE_KINDS)('changeLines on %s', (kind) => {
  const withChanges = storeWithChangeRows(kind, ROWS);

  it('is the lines of listChanges, byte for byte, whatever the filter', async () => {
    const store = await withChanges();
    const filters: ChangeStreamFilter[] = [
      {},
      { kind: 'changed' },
      { kind: 'added' },
      { kind: 'removed' },
      { field: 'name' },
      { beforeId: 150 },
      { uuid: '00000003-0000-4000-8000-000000000000' },
      { uuids: [] },
    ];
    for (const filter of filters) {
      for (const batchSize of [1, 7, 1000]) {
        for (const batch of await bothWays(store, filter, batchSize)) {
          expect(batch.db.equals(batch.rows), `${JSON.stringify(filter)} by ${batchSize}`).toBe(true);
          expect(batch.count).toBe(batch.ids.length);
          expect(batch.lastId).toBe(batch.ids.at(-1));
        }
      }
    }
    const whole = await store.changeLines({ limit: ROWS + 5 });
    expect(whole.count).toBe(ROWS);
    expect(Buffer.from(whole.text).toString('utf8').split('\n')).toHaveLength(ROWS + 1);
  });

  it('writes a stored text that would read back otherwise as its rows read it', async () => {
    const store = await withChanges();
    const changed = (await store.listChanges({ kind: 'changed', limit: ROWS })).map((r) => r.id);
    const added = (await store.listChanges({ kind: 'added', limit: ROWS })).map((r) => r.id);
    // Spread over the history, so most batches of 7 hold none of them.
    ODD_TEXTS.forEach((text, i) => {
      expect(changed[i * 6]).toBeDefined();
    });
    for (const [i, text] of ODD_TEXTS.entries()) {
      await storeRows(store, `update changes set old_value = ${literal(text)} where id = ${changed[i * 6]}`);
      await storeRows(store, `update changes set new_value = ${literal(text)} where id = ${added[i * 3]}`);
    }
    // A field and a uuid with what a JSON string must escape.
    await storeRows(store, `update changes set field = ${literal('a\u0001"\\\nb')} where id = ${changed[1]}`);
    await storeRows(store, `update changes set uuid = ${literal('u\t"\u0007')} where id = ${added[1]}`);
    for (const batchSize of [7, 1000]) {
      let batches = 0;
      for (const batch of await bothWays(store, {}, batchSize)) {
        batches += 1;
        expect(batch.db.equals(batch.rows), `by ${batchSize}, batch ${batches}`).toBe(true);
        expect(batch.count).toBe(batch.ids.length);
      }
      expect(batches).toBeGreaterThan(0);
    }
  });

  it.skipIf(kind !== 'sqlite')('writes a stored text that is no UTF-8 as its rows read it', async () => {
    const store = await withChanges();
    const [id] = (await store.listChanges({ kind: 'changed', limit: 1 })).map((r) => r.id);
    // An encoded lone surrogate, which reads back as U+FFFD: only SQLite stores such bytes.
    await storeRows(store, `update changes set old_value = cast(x'22eda08022' as text) where id = ${id}`);
    const [batch] = await bothWays(store, { kind: 'changed', limit: 7 }, 7);
    expect(batch?.ids).toContain(id);
    expect(batch?.db.equals(batch.rows)).toBe(true);
    expect(batch?.db.includes(Buffer.from('\ufffd'))).toBe(true);
  });

  it('fails as the rows fail on a stored text that is no JSON, never passing it on', async () => {
    const store = await withChanges();
    const [id] = (await store.listChanges({ kind: 'changed', limit: 1 })).map((r) => r.id);
    for (const text of NOT_JSON) {
      await storeRows(store, `update changes set old_value = ${literal(text)} where id = ${id}`);
      const rows = await store.listChanges({ kind: 'changed', limit: 7 });
      expect(rows.map((r) => r.id)).toContain(id);
      expect(() => lines.changeLinesOf(rows), text).toThrow();
      await expect(store.changeLines({ kind: 'changed', limit: 7 }), text).rejects.toThrow();
    }
  });
});

/** Stored texts that are no JSON, some of which would make the line look like more of it. */
const NOT_JSON = ['"a\u0001b"', '1,"x":2', '1,"new":2', '1}\n{"id":1', 'not json', ''];
