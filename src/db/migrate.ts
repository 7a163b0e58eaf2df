import { fileURLToPath } from 'node:url';
import { migrate as drizzleMigrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { MirrorError } from '../errors.js';

// src/db/ and dist/db/ sit at the same depth, so this resolves to the committed migrations/ in both.
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Applies the committed drizzle-kit migrations; the one code path for CLI, server, tests and Docker. */
export function migrate(db: BetterSQLite3Database<Record<string, unknown>>): void {
  try {
    drizzleMigrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
  } catch (cause) {
    throw new MirrorError(
      'DB_ERROR',
      `database migration failed: ${(cause as Error).message}`,
      { migrationsFolder: MIGRATIONS_FOLDER },
      { cause },
    );
  }
}
