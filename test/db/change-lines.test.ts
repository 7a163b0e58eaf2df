import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { ChangeStreamFilter } from '../../src/db/change-batches.js';
import * as lines from '../../src/db/change-lines.js';
import { SqliteStore } from '../../src/db/sqlite/store.js';
import type { Store } from '../../src/db/store.js';
import { STORE_KINDS, storeRows } from '../helpers/postgres.js';
import { storeWithChangeRows } from '../helpers/store-runs.js';

// Every batch written from its rows is counted: the database's own lines must be the ones used
// when they are right, and refused when they are not.
vi.mock('../../src/db/change-lines.js', async (importOriginal) => {
  const actual = await importOriginal<typeof lines>();
  return { ...actual, changeLinesOf: vi.fn(actual.changeLinesOf) };
});
const fromRows = vi.mocked(lines.changeLinesOf);

const ROWS = 300;

/** Every batch of `filter` both ways: the store's lines and the lines of its rows, side by side. */
async function bothWays(store: Store, filter: ChangeStreamFilter, batchSize: number) {
  const found: { db: Buffer; rows: Buffer; count: number; lastId: number | undefined; ids: number[] }[] = [];
  let beforeId = filter.beforeId;
  for (;;) {
    const batch = { ...filter, limit: batchSize, ...(beforeId === undefined ? {} : { beforeId }) };
    const rows = await store.listChanges(batch);
    const db = await store.changeLines(batch);
    const calls = fromRows.mock.calls.length;
    const expected = lines.changeLinesOf(rows);
    // Only the store's own calls stay counted.
    fromRows.mock.calls.splice(calls);
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

  it('is the lines of listChanges, byte for byte, written by the database, whatever the filter', async () => {
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
    fromRows.mockClear();
    for (const filter of filters) {
      for (const batchSize of [1, 7, 1000]) {
        for (const batch of await bothWays(store, filter, batchSize)) {
          expect(batch.db.equals(batch.rows), `${JSON.stringify(filter)} by ${batchSize}`).toBe(true);
          expect(batch.count).toBe(batch.ids.length);
          expect(batch.lastId).toBe(batch.ids.at(-1));
        }
      }
    }
    // Every batch was the database's: the texts the sync writes pass the check.
    expect(fromRows).not.toHaveBeenCalled();
    const whole = await store.changeLines({ limit: ROWS + 5 });
    expect(whole.count).toBe(ROWS);
    expect(Buffer.from(whole.text).toString('utf8').split('\n')).toHaveLength(ROWS + 1);
  });

  it('writes a batch from its rows when a stored text would read back otherwise, and only such a batch', async () => {
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
      fromRows.mockClear();
      let batches = 0;
      for (const batch of await bothWays(store, {}, batchSize)) {
        batches += 1;
        expect(batch.db.equals(batch.rows), `by ${batchSize}, batch ${batches}`).toBe(true);
        expect(batch.count).toBe(batch.ids.length);
      }
      expect(fromRows).toHaveBeenCalled();
      if (batchSize === 7) expect(fromRows.mock.calls.length).toBeLessThan(batches - 5);
    }
  });

  it.skipIf(kind !== 'sqlite')('writes a batch from its rows when a stored text is no UTF-8', async () => {
    const store = await withChanges();
    const [id] = (await store.listChanges({ kind: 'changed', limit: 1 })).map((r) => r.id);
    // An encoded lone surrogate, which reads back as U+FFFD: only SQLite stores such bytes.
    await storeRows(store, `update changes set old_value = cast(x'22eda08022' as text) where id = ${id}`);
    fromRows.mockClear();
    const [batch] = await bothWays(store, { kind: 'changed', limit: 7 }, 7);
    expect(batch?.ids).toContain(id);
    expect(batch?.db.equals(batch.rows)).toBe(true);
    expect(batch?.db.includes(Buffer.from('\ufffd'))).toBe(true);
    expect(fromRows).toHaveBeenCalledTimes(1);
  });

  it.skipIf(kind !== 'sqlite')(
    "writes a batch from its rows when its lines pass SQLite's largest value",
    async () => {
      const store = await withChanges();
      if (!(store instanceof SqliteStore)) throw new Error('a SQLite store');
      // A billion bytes of lines is no test's to write: SQLite's own answer to one, given to the
      // lines query alone (the store's statements are prepared on first use, this one included).
      const prepare = store.sqlite.prepare.bind(store.sqlite);
      const spy = vi.spyOn(store.sqlite, 'prepare').mockImplementation((source: string) => {
        const statement = prepare(source);
        if (source.includes('group_concat(line')) {
          vi.spyOn(statement, 'get').mockImplementation(() => {
            throw new Database.SqliteError('string or blob too big', 'SQLITE_TOOBIG');
          });
        }
        return statement;
      });
      try {
        fromRows.mockClear();
        const batches = await bothWays(store, {}, 7);
        for (const batch of batches) {
          expect(batch.db.equals(batch.rows)).toBe(true);
          expect(batch.count).toBe(batch.ids.length);
        }
        // Every batch from its rows, and none lost: SQLite's refusal is not an empty batch.
        expect(fromRows).toHaveBeenCalledTimes(batches.length);
        expect(batches.reduce((sum, b) => sum + b.count, 0)).toBe(ROWS);
      } finally {
        spy.mockRestore();
      }
    },
  );

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

describe('checkedLines', () => {
  const line = (id: number, value = '"x"') =>
    `{"id":${id},"run":2,"at":"2025-03-01T10:00:00.000Z","uuid":"u","appearance":0,"kind":"added","new":${value}}\n`;
  const check = (text: string, count: number) => lines.checkedLines(Buffer.from(text), count);

  it('takes lines each as changeViewJson writes them, newest first', () => {
    expect(check(line(9) + line(8) + line(2, '{"a":[1,true,null]}'), 3)).toBe(true);
    expect(check('', 0)).toBe(true);
  });

  it('refuses lines out of order, too few or too many, or not ended', () => {
    expect(check(line(8) + line(9), 2)).toBe(false);
    expect(check(line(9) + line(9), 2)).toBe(false);
    expect(check(line(9) + line(8), 3)).toBe(false);
    expect(check(line(9) + line(8), 1)).toBe(false);
    expect(check(line(9).trimEnd(), 1)).toBe(false);
  });

  it('refuses bytes that are no UTF-8', () => {
    const [head, tail] = line(9, '"ab"').split('ab');
    expect(
      lines.checkedLines(
        Buffer.concat([Buffer.from(head ?? ''), Buffer.from('eda080', 'hex'), Buffer.from(tail ?? '')]),
        1,
      ),
    ).toBe(false);
    expect(
      lines.checkedLines(
        Buffer.concat([Buffer.from(head ?? ''), Buffer.from('é'), Buffer.from(tail ?? '')]),
        1,
      ),
    ).toBe(true);
  });

  it('refuses a line of another shape, or a value that adds to it', () => {
    expect(check(line(9, '1,"x":2'), 1)).toBe(false);
    expect(check(line(9).replace('"kind"', '"kinds"'), 1)).toBe(false);
    expect(check(line(9).replace(',"appearance":0', ''), 1)).toBe(false);
    expect(check(line(9, '1}'), 1)).toBe(false);
  });
});

describe('a lines query refused for its size', () => {
  it("is TOO_BIG only for the dialect's own code, and sends the batch to its rows, never to an empty batch", () => {
    // PostgreSQL's 54000 needs a 1 GB text to raise for real; its mapping is this.
    for (const code of ['SQLITE_TOOBIG', '54000'] as const) {
      expect(lines.tooBig(Object.assign(new Error('too big'), { code }), code)).toBe(lines.TOO_BIG);
    }
    const other = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    expect(() => lines.tooBig(other, 'SQLITE_TOOBIG')).toThrow(other);
    expect(() => lines.tooBig(Object.assign(new Error('x'), { code: '54000' }), 'SQLITE_TOOBIG')).toThrow(
      'x',
    );
    expect(lines.vouchedLines(lines.TOO_BIG)).toBeNull();
    expect(lines.vouchedLines(undefined)).toBe(lines.NO_LINES);
  });
});
