import type { Config } from '../config/load-config.js';
import { openStore } from '../db/open-store.js';
import type { Store } from '../db/store.js';

/**
 * Runs a command on the configured store (SQLite or PostgreSQL) and closes it. A SQLite file must
 * exist: a mistyped --db exits 2 naming the path and creates nothing (a read-only one is opened
 * read-only).
 */
export async function withExistingStoreAsync<T>(
  config: Pick<Config, 'database'>,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openStore(config.database, { existing: true });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
