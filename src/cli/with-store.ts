import type { Config } from '../config/load-config.js';
import { openExistingDatabase } from '../db/open-existing.js';
import type { MirrorDatabase } from '../db/open.js';
import type { Store } from '../db/store.js';

/**
 * Runs a command on the configured database and closes it. The database must exist: a mistyped
 * --db exits 2 naming the path and creates nothing (a read-only one is opened read-only).
 */
export function withExistingStore<T>(config: Pick<Config, 'database'>, fn: (store: MirrorDatabase) => T): T {
  const store = openExistingDatabase(config.database.path);
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/** `withExistingStore` for commands that await the store's operations. */
export async function withExistingStoreAsync<T>(
  config: Pick<Config, 'database'>,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  const store = openExistingDatabase(config.database.path);
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}
