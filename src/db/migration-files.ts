import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator';
import { migrationsFolder, type Dialect } from './migration-times.js';

// Where a database stands is asked at every read command: it reads the journal alone (migration-times.ts).
export { migrationsFolder, standingOf, type Dialect, type SchemaStanding } from './migration-times.js';

// The migrations folder is part of the build: read once per process, not at every open.
const known = new Map<Dialect, MigrationMeta[]>();

/** The migrations this build carries, oldest first, as drizzle's migrators read them. */
export function knownMigrations(dialect: Dialect): MigrationMeta[] {
  let list = known.get(dialect);
  if (!list) known.set(dialect, (list = readMigrationFiles({ migrationsFolder: migrationsFolder(dialect) })));
  return list;
}
