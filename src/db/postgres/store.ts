import type { PostgresTarget } from '../../config/database-url.js';
import { MirrorError } from '../../errors.js';
import type { Store } from '../store.js';

/**
 * PLACEHOLDER until the PostgreSQL store is merged: the shape the rest of the code is written
 * against (the real one is `class PgStore implements Store`). The lead replaces this file.
 */
export interface PgStore extends Store {
  close(): Promise<void>;
}

export function openPgStore(
  target: PostgresTarget,
  options: { poolMax?: number; instanceId?: string },
): Promise<PgStore> {
  void options;
  return Promise.reject(
    new MirrorError('DB_ERROR', `PostgreSQL store not merged yet (${target.label})`, {
      database: target.label,
    }),
  );
}
