import { fileURLToPath } from 'node:url';
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator';

export type Dialect = 'sqlite' | 'postgres';

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

/** Where the database's schema stands against the migrations this build carries. */
export interface SchemaStanding {
  /** Migrations of this build not yet applied. */
  pending: number;
  /** The database holds a migration later than any this build knows: written by a newer version. */
  newer: boolean;
}

/**
 * Compares the newest migration a database records (drizzle's `created_at`, 0 for none) with this
 * build's, the way drizzle's migrators decide what to apply.
 */
export function standingOf(dialect: Dialect, lastApplied: number): SchemaStanding {
  const whens = knownMigrations(dialect).map((m) => m.folderMillis);
  return {
    pending: whens.filter((when) => when > lastApplied).length,
    newer: whens.every((when) => lastApplied > when),
  };
}
