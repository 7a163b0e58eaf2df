import { fileURLToPath } from 'node:url';
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator';

import type { Dialect } from './migration-times.js';

export type { Dialect };

/**
 * The committed migrations of one dialect. src/db/ and dist/db/ sit at the same depth, so this
 * resolves to the repository's migrations/<dialect>/ in both.
 */
export function migrationsFolder(dialect: Dialect): string {
  return fileURLToPath(new URL(`../../migrations/${dialect}`, import.meta.url));
}

// The migrations folder is part of the build: read once per process, not at every open.
const known = new Map<Dialect, MigrationMeta[]>();

/** The migrations this build carries, oldest first, as drizzle's migrators read them. */
export function knownMigrations(dialect: Dialect): MigrationMeta[] {
  let list = known.get(dialect);
  if (!list) {
    list = readMigrationFiles({ migrationsFolder: migrationsFolder(dialect) });
    known.set(dialect, list);
  }
  return list;
}

// Where a database stands is asked at every read command: it reads the journal alone (migration-times.ts).
export { standingOf, type SchemaStanding } from './migration-times.js';
