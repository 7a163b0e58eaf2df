import type { ChangeStreamFilter, Store } from '../../src/db/store.js';
import { describe, expect, it } from 'vitest';
import {
  changeExportTexts,
  exportThreadsRunning,
  type ExportFormat,
} from '../../src/export/change-export.js';
import { STORE_KINDS } from '../helpers/postgres.js';
import { commitChangeRows, storeWithChangeRows } from '../helpers/store-runs.js';

const ROWS = 300;

async function exported(
  store: Store,
  filter: ChangeStreamFilter,
  format: ExportFormat,
  options: { batchSize: number; parallel: boolean },
): Promise<{ text: string; threads: number }> {
  let text = '';
  let threads = 0;
  for await (const chunk of changeExportTexts(store, filter, format, options)) {
    text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    threads = Math.max(threads, exportThreadsRunning());
  }
  return { text, threads };
}

/** The runs' finish times, oldest first, for the time filters. */
async function runTimes(store: Store): Promise<string[]> {
  const rows = await store.listChanges({ limit: ROWS + 1 });
  return [...new Set(rows.map((r) => r.at))].sort();
}

describe.each(STORE_KINDS)('on %s', (kind) => {
  const withChanges = storeWithChangeRows(kind, ROWS);

  it('changeIdAt names the id the keyset read finds at each offset, for every filter', async () => {
    const store = await withChanges();
    const [first, , last] = await runTimes(store);
    const uuid = (await store.listChanges({ limit: 1 }))[0]?.uuid ?? '';
    const filters: ChangeStreamFilter[] = [
      {},
      { kind: 'changed' },
      { kind: 'added' },
      { uuid },
      { field: 'name' },
      { beforeId: 100 },
      { since: last ?? '' },
      { until: first ?? '' },
      { uuids: [] },
    ];
    for (const filter of filters) {
      const ids = (await store.listChanges({ ...filter, limit: ROWS + 1 })).map((r) => r.id);
      for (const offset of [0, 1, 6, ids.length - 1, ids.length, ROWS + 5]) {
        expect(await store.changeIdAt(filter, offset), `${JSON.stringify(filter)} at ${offset}`).toBe(
          ids[offset] ?? null,
        );
      }
    }
  });

  it('a parallel export writes the bytes of a one-thread export, whatever the filter and limit', async () => {
    const store = await withChanges();
    const [, second] = await runTimes(store);
    const filters: ChangeStreamFilter[] = [
      {},
      { limit: 50 },
      { limit: 49 },
      { limit: 7 },
      { beforeId: 150, limit: 100 },
      { kind: 'removed' },
      { since: second ?? '' },
      { field: 'name', limit: 60 },
      { uuids: [] },
    ];
    for (const format of ['csv', 'jsonl'] as const) {
      for (const filter of filters) {
        const one = await exported(store, filter, format, { batchSize: 7, parallel: false });
        const two = await exported(store, filter, format, { batchSize: 7, parallel: true });
        expect(two.text, `${format} ${JSON.stringify(filter)}`).toBe(one.text);
        expect(one.threads).toBe(0);
      }
      // Only a SQLite file can be opened by a second thread; PostgreSQL exports on one.
      const whole = await exported(store, {}, format, { batchSize: 7, parallel: true });
      expect(whole.threads).toBe(kind === 'sqlite' ? 1 : 0);
    }
    // An export within one batch starts no thread.
    expect((await exported(store, { limit: 7 }, 'csv', { batchSize: 7, parallel: true })).threads).toBe(0);
    expect(exportThreadsRunning()).toBe(0);
  });

  it.skipIf(kind !== 'sqlite')(
    'a sync that commits while a parallel export runs adds nothing to it and drops nothing from it',
    async () => {
      const store = await withChanges();
      const before = await exported(store, {}, 'jsonl', { batchSize: 7, parallel: false });
      let committed = false;
      // The commit lands after the export planned its first batches and before it read the first.
      const racing = new Proxy(store, {
        get(target, key) {
          const value: unknown = Reflect.get(target, key);
          // The JSON Lines export reads its batches as lines (`changeLines`).
          if (key === 'changeLines' && !committed) {
            return async (filter: Parameters<Store['changeLines']>[0]) => {
              committed = true;
              await commitChangeRows(target, ROWS);
              return target.changeLines(filter);
            };
          }
          return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
        },
      });
      const during = await exported(racing, {}, 'jsonl', { batchSize: 7, parallel: true });
      expect(committed).toBe(true);
      expect(during.threads).toBe(1);
      expect(during.text).toBe(before.text);
      expect((await store.listChanges({ limit: 1 }))[0]?.id).toBeGreaterThan(ROWS);
    },
  );

  it.skipIf(kind !== 'sqlite')(
    'a reader thread that cannot read fails the export with the reason, and gives its place back',
    async () => {
      const store = await withChanges();
      // The thread opens what readerTarget names: here a file that is not there.
      const missing = { file: `${store.file}.gone/mirror.db`, immutable: false };
      const broken = new Proxy(store, {
        get(target, key) {
          if (key === 'readerTarget') return missing;
          const value: unknown = Reflect.get(target, key);
          return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
        },
      });
      await expect(exported(broken, {}, 'jsonl', { batchSize: 7, parallel: true })).rejects.toMatchObject({
        code: 'DB_ERROR',
        message: expect.stringMatching(
          /the export's reader thread failed: cannot open database .*mirror\.db/,
        ) as unknown,
      });
      expect(exportThreadsRunning()).toBe(0);
    },
  );

  it('an empty CSV export is its head; an empty JSON Lines export is empty', async () => {
    const store = await withChanges();
    const csv = await exported(store, { uuids: [] }, 'csv', { batchSize: 7, parallel: true });
    expect(csv.text).toBe('\ufeffid,run,at,uuid,appearance,name,kind,field,old,new,sentence\r\n');
    expect((await exported(store, { uuids: [] }, 'jsonl', { batchSize: 7, parallel: true })).text).toBe('');
  });

  it('a consumer that stops early stops the thread; exports at once share at most two threads', async () => {
    const store = await withChanges();
    const texts = changeExportTexts(store, {}, 'jsonl', { batchSize: 5, parallel: true });
    await texts.next();
    await texts.next();
    expect(exportThreadsRunning()).toBe(kind === 'sqlite' ? 1 : 0);
    await texts.return(undefined);
    expect(exportThreadsRunning()).toBe(0);

    const alone = await exported(store, {}, 'csv', { batchSize: 5, parallel: false });
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, exportThreadsRunning())), 1);
    const four = await Promise.all(
      [1, 2, 3, 4].map(() => exported(store, {}, 'csv', { batchSize: 5, parallel: true })),
    );
    clearInterval(watch);
    for (const { text } of four) expect(text).toBe(alone.text);
    expect(Math.max(most, ...four.map((e) => e.threads))).toBeLessThanOrEqual(2);
    expect(exportThreadsRunning()).toBe(0);
  });
});
