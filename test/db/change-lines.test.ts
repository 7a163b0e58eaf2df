import type { ChangeStreamFilter, Store } from '../../src/db/store.js';
import { describe, expect, it } from 'vitest';
import { changeLines } from '../../src/db/change-lines.js';
import { changeView } from '../../src/views/history-views.js';
import type { MirrorDatabase } from '../../src/db/open.js';
import type { ChangeRow } from '../../src/db/schema.js';
import { sqliteSqlPort } from '../../src/db/sqlite/sql-port.js';
import type { SqlPort } from '../../src/db/sql-port.js';
import { stringifyJson } from '../../src/json/safe-json.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { rawUpstream } from '../helpers/raw-upstream.js';
import { sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { storeWithChangeRows } from '../helpers/store-runs.js';

const ROWS = 300;

/** The history API's change, as the export must write it: one line each, newest first. */
const expectedLines = (rows: readonly ChangeRow[]): Buffer =>
  Buffer.from(rows.map((row) => `${stringifyJson(changeView(row))}\n`).join(''));

/** Every batch of `filter`: the store's lines beside the history's rows of the same batch. */
async function batchesOf(store: Store, filter: ChangeStreamFilter, batchSize: number) {
  const found: {
    lines: Buffer;
    expected: Buffer;
    count: number;
    lastId: number | undefined;
    ids: number[];
  }[] = [];
  let beforeId = filter.beforeId;
  for (;;) {
    const batch = { ...filter, limit: batchSize, ...(beforeId === undefined ? {} : { beforeId }) };
    const rows = await store.listChanges(batch);
    const lines = await store.changeLines(batch);
    found.push({
      lines: Buffer.from(lines.text),
      expected: expectedLines(rows),
      count: lines.count,
      lastId: lines.lastId,
      ids: rows.map((r) => r.id),
    });
    if (rows.length < batchSize) return found;
    beforeId = rows.at(-1)?.id;
  }
}

const uuid = (n: number) => `${'c'.repeat(31)}${n}`;
/** An entry as text: the contract's fields, then `extra` (more fields, as text) as it is. */
const entry = (n: number, name: string, extra = '') =>
  `{ "uuid" : "${uuid(n)}", "name": ${name}, "post":"Dev" , "emoji_file": null, "emoji_file_webm": null,` +
  ` "show_image": true, "images": [ ]${extra} }`;

/**
 * Texts an upstream may write that V8 would write otherwise: numbers it would round or respell,
 * escapes it would not write, whitespace, a duplicate key, keys that are array indexes (which JS
 * orders first), a lone surrogate, characters JSON must escape, in values and in field names.
 */
const ODD = {
  name: '"Zo\\u00eb \\/ \\"q\\" \\\\ \\u2028 \\ud800 \\u0007\\t"',
  extra:
    ', "figures": {"b": [1.0, 1e3, -0, 12345678901234567890, 1.5E-7, 0.1], "10": {"z":1,"a":2}, "2": null, "a\\u0001": true}' +
    ', "tag\\n\\ud83d\\ude00": "x", "dup": 1, "dup": 2',
  changedExtra:
    ', "figures": {"b": [2.50, -1E+2], "2": {"10": 1, "9": 2}, "10": [ ]}, "tag\\n\\ud83d\\ude00": "y\\ud800\\u0000", "dup": 3',
};

describe.each(STORE_KINDS)('changeLines on %s', (kind) => {
  const withChanges = storeWithChangeRows(kind, ROWS);
  const fresh = storeMaker(kind);

  it("is the history API's changes, byte for byte, whatever the filter and batch", async () => {
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
        for (const batch of await batchesOf(store, filter, batchSize)) {
          expect(batch.lines.equals(batch.expected), `${JSON.stringify(filter)} by ${batchSize}`).toBe(true);
          expect(batch.count).toBe(batch.ids.length);
          expect(batch.lastId).toBe(batch.ids.at(-1));
        }
      }
    }
    const whole = await store.changeLines({ limit: ROWS + 5 });
    expect(whole.count).toBe(ROWS);
    expect(Buffer.from(whole.text).toString('utf8').split('\n')).toHaveLength(ROWS + 1);
  });

  it('writes what syncs of an odd upstream stored as the history API reads it, every kind of change', async () => {
    const store = await fresh();
    const upstream = await rawUpstream();
    const env = { MEDIA_DIR: tempDir() };
    const plain = (n: number) => entry(n, `"Plain ${n}"`);
    // Added; changed (odd old and new values, odd field names); removed; returned.
    upstream.serve([entry(1, ODD.name, ODD.extra), plain(2), plain(3), plain(3)]);
    await sync(store, upstream, env); // throws unless the run succeeds
    upstream.serve([entry(1, '"Zoë\\u2029"', ODD.changedExtra), plain(2), entry(4, ODD.name, ODD.extra)]);
    await sync(store, upstream, env); // throws unless the run succeeds
    upstream.serve([
      entry(1, '"Zoë\\u2029"', ODD.changedExtra),
      plain(3),
      entry(4, ODD.name, ODD.changedExtra),
    ]);
    await sync(store, upstream, env); // throws unless the run succeeds
    const rows = await store.listChanges({ limit: 1000 });
    expect(new Set(rows.map((r) => r.kind))).toEqual(new Set(['added', 'changed', 'removed', 'returned']));
    expect(rows.filter((r) => r.field === 'figures').length).toBeGreaterThan(0);
    for (const batchSize of [1, 3, 1000]) {
      for (const batch of await batchesOf(store, {}, batchSize)) {
        expect(batch.lines.toString('utf8'), `by ${batchSize}`).toBe(batch.expected.toString('utf8'));
        expect(batch.lines.equals(batch.expected)).toBe(true);
      }
    }
  });

  it.skipIf(kind !== 'sqlite')(
    'writes a stored text that is no UTF-8 as reading it as text gives it',
    async () => {
      const store = await withChanges();
      const [id] = (await store.listChanges({ kind: 'changed', limit: 1 })).map((r) => r.id);
      // An encoded lone surrogate, which reads back as U+FFFD: only SQLite stores such bytes.
      await storeRows(store, `update changes set field = cast(x'61eda080' as text) where id = ${id}`);
      const [batch] = await batchesOf(store, { kind: 'changed', limit: 7 }, 7);
      expect(batch?.ids).toContain(id);
      expect(batch?.lines.equals(batch.expected)).toBe(true);
      expect(batch?.lines.includes(Buffer.from('\ufffd'))).toBe(true);
    },
  );
});

describe('a batch of lines too big for one value of the database', () => {
  const withChanges = storeWithChangeRows('sqlite', 40);

  /** The store's port, refusing as SQLite does past its largest value any batch over `most` rows. */
  const refusingPort = (store: MirrorDatabase, most: number, asked: number[]): SqlPort => {
    const port = sqliteSqlPort((sql) => store.sqlite.prepare(sql));
    return {
      ...port,
      rows: (sql, params = []) => {
        const limit = Number(params.at(-1));
        asked.push(limit);
        if (limit > most)
          return Promise.reject(
            Object.assign(new Error('string or blob too big'), { code: 'SQLITE_TOOBIG' }),
          );
        return port.rows(sql, params);
      },
    };
  };

  it('is read in halves, one keyset after the other: the same lines', async () => {
    const store = (await withChanges()) as Store & MirrorDatabase;
    const all = await store.changeLines({ limit: 100 });
    const asked: number[] = [];
    const halved = await changeLines(refusingPort(store, 6, asked), { limit: 37 });
    const first37 = Buffer.from(all.text).toString('utf8').split('\n').slice(0, 37).join('\n');
    expect(Buffer.from(halved.text).toString('utf8')).toBe(`${first37}\n`);
    expect(halved.count).toBe(37);
    expect(asked.every((n) => n <= 37)).toBe(true);
    const filtered = await changeLines(refusingPort(store, 2, []), { kind: 'changed', limit: 9 });
    expect(Buffer.from(filtered.text)).toEqual(
      Buffer.from((await store.changeLines({ kind: 'changed', limit: 9 })).text),
    );
  });

  it('fails with the database refusal when even one row is too big', async () => {
    const store = (await withChanges()) as Store & MirrorDatabase;
    await expect(changeLines(refusingPort(store, 0, []), { limit: 5 })).rejects.toMatchObject({
      code: 'SQLITE_TOOBIG',
    });
  });
});
