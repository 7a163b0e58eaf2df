import { toMirrorError } from '../errors.js';
import type { SqliteHandle } from './sqlite/handle.js';
import { prepared } from './prepared.js';

/** Each table with its key (coworkers has no rowid: migration coworkers_without_rowid). */
const PROBED_TABLES = [
  ['runs', 'rowid'],
  ['coworkers', 'uuid'],
  ['versions', 'rowid'],
  ['listing_positions', 'rowid'],
  ['changes', 'rowid'],
  ['options_bodies', 'rowid'],
] as const;

/**
 * A readiness probe of the database: the newest row of every table (one b-tree descent each, so
 * cheap at any size, and the pages a truncated file loses first) and whether the path still names
 * the file opened. Returns what is wrong, or null.
 */
export function databaseProblem(store: SqliteHandle): string | null {
  const moved = store.fileProblem();
  if (moved !== null) return moved;
  try {
    for (const [table, key] of PROBED_TABLES)
      prepared(store.sqlite, `select max(${key}) from ${table}`).get();
    return null;
  } catch (error) {
    return toMirrorError(error).message;
  }
}
