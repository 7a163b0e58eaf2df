import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';

/** A real SQLite file with the real migrations, in a temp dir removed when the test ends. */
export function tempDatabase(): MirrorDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'coworker-mirror-'));
  const store = openDatabase(join(dir, 'mirror.db'));
  onTestFinished(() => {
    try {
      store.close();
    } catch {
      // already closed by the test
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'coworker-mirror-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every row of a table, ordered by its first column, for whole-table assertions. */
export function tableRows(store: MirrorDatabase, table: string, columns = '*'): Record<string, unknown>[] {
  return store.sqlite.prepare(`select ${columns} from ${table} order by 1`).all() as Record<
    string,
    unknown
  >[];
}
