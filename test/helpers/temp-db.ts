import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import { untilTestEnds, type Defer } from './scope.js';

/** A real SQLite file with the real migrations, in a temp dir removed when the test ends (or `defer` says). */
export function tempDatabase(defer: Defer = untilTestEnds): MirrorDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'coworker-mirror-'));
  const store = openDatabase(join(dir, 'mirror.db'));
  defer(() => {
    try {
      store.close();
    } catch {
      // already closed by the test
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

export function tempDir(defer: Defer = untilTestEnds): string {
  const dir = mkdtempSync(join(tmpdir(), 'coworker-mirror-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every row of a table, ordered by its first column, for whole-table assertions. */
export function tableRows(store: MirrorDatabase, table: string, columns = '*'): Record<string, unknown>[] {
  return store.sqlite.prepare(`select ${columns} from ${table} order by 1`).all() as Record<
    string,
    unknown
  >[];
}
