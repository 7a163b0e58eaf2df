import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runChangesCommand, type ChangesOptions } from '../../src/cli/history-commands.js';
import { changeView } from '../../src/views/history-views.js';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import { stringifyJson } from '../../src/json/safe-json.js';
import { changesCsv } from '../../src/web/change-csv.js';
import { writeChangeRows } from '../helpers/change-rows.js';
import { testConfig } from '../helpers/config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { BUILT_CLI, ensureBuilt } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';
import { STORE_KINDS } from '../helpers/postgres.js';
import { storeWithChangeRows } from '../helpers/store-runs.js';
import type { Store } from '../../src/db/store.js';

const ROWS = 2345;

function storeWithChanges(): { store: MirrorDatabase; file: string } {
  const file = join(tempDir(), 'mirror.db');
  const store = openDatabase(file);
  writeChangeRows(store, ROWS);
  return { store, file };
}

/** Every change, newest first, in one read: what each export must equal. */
async function everyChange(store: Store, filter: { kind?: 'added'; beforeId?: number } = {}) {
  return store.listChanges({ ...filter, limit: ROWS + 1 });
}

describe.each(STORE_KINDS)('on %s', (kind) => {
  const withChanges = storeWithChangeRows(kind, ROWS);

  describe('changesInBatches', () => {
    it('reads every match newest first in keyset batches, the limit capping the whole', async () => {
      const store = await withChanges();
      const sizes = async (filter: Parameters<typeof store.changesInBatches>[0], size: number) => {
        const seen: number[][] = [];
        for await (const batch of store.changesInBatches(filter, size)) seen.push(batch.map((r) => r.id));
        return seen;
      };
      const all = await sizes({}, 1000);
      expect(all.map((b) => b.length)).toEqual([1000, 1000, 345]);
      expect(all.flat()).toEqual((await everyChange(store)).map((r) => r.id));
      expect((await sizes({ limit: 1500 }, 1000)).map((b) => b.length)).toEqual([1000, 500]);
      expect((await sizes({ limit: 2000 }, 1000)).map((b) => b.length)).toEqual([1000, 1000]);
      expect((await sizes({ beforeId: 11 }, 4)).flat()).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
      expect(await sizes({ uuids: [] }, 10)).toEqual([]);
    });
  });

  describe('the whole-history HTTP export', () => {
    it('JSON Lines: every change as the API shows it, in one streamed answer, filters and start applied', async () => {
      const store = await withChanges();
      const mirror = await startMirror(store);
      const answer = await fetch(`${mirror.url}/api/mirror/changes/export.jsonl`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/jsonl; charset=utf-8');
      const lines = (await everyChange(store)).map((row) => `${stringifyJson(changeView(row))}\n`);
      expect(await answer.text()).toBe(lines.join(''));

      const filtered = await fetch(`${mirror.url}/api/mirror/changes/export.jsonl?kind=added&before=100`);
      const expected = (await everyChange(store, { kind: 'added', beforeId: 100 })).map(
        (row) => `${stringifyJson(changeView(row))}\n`,
      );
      expect(await filtered.text()).toBe(expected.join(''));
      expect((await fetch(`${mirror.url}/api/mirror/changes/export.jsonl?kind=moved`)).status).toBe(400);
    });

    it('CSV: byte for byte the feed of every change at once (one BOM, one header)', async () => {
      const store = await withChanges();
      const mirror = await startMirror(store);
      const answer = await fetch(`${mirror.url}/api/mirror/changes/export.csv`);
      const rows = await everyChange(store);
      const expected = changesCsv(rows, await store.changeSubjects(rows));
      expect(Buffer.from(await answer.arrayBuffer()).equals(Buffer.from(expected))).toBe(true);
      const empty = await fetch(`${mirror.url}/api/mirror/changes/export.csv?since=2030-01-01T00:00:00Z`);
      expect(await empty.text()).toBe(changesCsv([], new Map()).replace(/^\uFEFF/, ''));
    });
  });

  describe('the paged feeds', () => {
    it.each(['csv', 'atom'])(
      'regression: changes.%s links to its next page; following the links reads every change once',
      async (ext) => {
        const store = await withChanges();
        const mirror = await startMirror(store);
        let url: string | null = `${mirror.url}/api/mirror/changes.${ext}?page_size=500&kind=changed`;
        let pages = 0;
        const ids: string[] = [];
        while (url) {
          const answer: Response = await fetch(url);
          const text = await answer.text();
          for (const m of text.matchAll(ext === 'csv' ? /\r\n(\d+),\d+,/g : /<id>[^<]*?(\d+)<\/id>/g))
            ids.push(m[1] ?? '');
          url = /^<([^>]+)>; rel="next"$/.exec(answer.headers.get('link') ?? '')?.[1] ?? null;
          pages += 1;
        }
        const changed = (await store.listChanges({ kind: 'changed', limit: ROWS })).map((r) => String(r.id));
        expect(pages).toBe(Math.ceil(changed.length / 500));
        if (ext === 'csv') expect(ids).toEqual(changed);
      },
    );
  });
});

describe('changes --json / --csv', () => {
  const options = (format: 'json' | 'csv'): ChangesOptions => ({
    since: undefined,
    until: undefined,
    field: undefined,
    uuid: undefined,
    kind: undefined,
    limit: undefined,
    json: format === 'json',
    csv: format === 'csv',
  });

  it('writes each batch as it is read, awaiting the output between batches', async () => {
    const { store, file } = storeWithChanges();
    const rows = await everyChange(store);
    for (const format of ['json', 'csv'] as const) {
      const writes: string[] = [];
      let drains = 0;
      const out = {
        write: (text: string) => writes.push(`${text}\n`),
        style: { color: false, now: 0 },
        drained: () => {
          drains += 1;
          return Promise.resolve();
        },
      };
      await runChangesCommand(testConfig({ DATABASE_PATH: file }), options(format), out);
      // Two batches, and the CSV's head written alone before them.
      expect(writes.length).toBe(format === 'csv' ? 3 : 2);
      expect(drains).toBe(writes.length);
      const expected =
        format === 'json'
          ? rows.map((row) => `${stringifyJson(changeView(row))}\n`).join('')
          : changesCsv(rows, await store.changeSubjects(rows));
      // CSV records end CRLF; the last write's own newline stands for the last LF.
      expect(writes.join('')).toBe(expected);
    }
  });
});

describe('changes --json / --csv, the built CLI', () => {
  it('writes the bytes of the whole export to stdout: one BOM and header, every batch whole', async () => {
    ensureBuilt();
    const { store, file } = storeWithChanges();
    const rows = await everyChange(store);
    const run = (format: 'json' | 'csv') =>
      execFileSync(process.execPath, [BUILT_CLI, 'changes', `--${format}`, '--limit', 'all'], {
        env: { PATH: process.env.PATH ?? '', DATABASE_PATH: file, LOG_LEVEL: 'silent' },
        maxBuffer: 64 * 1024 * 1024,
      });
    const json = rows.map((row) => `${stringifyJson(changeView(row))}\n`).join('');
    expect(run('json').equals(Buffer.from(json))).toBe(true);
    const csv = changesCsv(rows, await store.changeSubjects(rows));
    expect(run('csv').equals(Buffer.from(csv))).toBe(true);
  });
});
