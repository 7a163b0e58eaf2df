import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { migrate as drizzleMigrate } from 'drizzle-orm/better-sqlite3/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { MirrorError } from '../errors.js';

// src/db/ and dist/db/ sit at the same depth, so this resolves to the committed migrations/ in both.
const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url));

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

// The migrations folder is part of the build: read once per process, not at every open.
let knownMigrations: number[] | undefined;

/** Where the database's schema stands against the migrations this build carries. */
export interface SchemaStanding {
  /** Migrations of this build not yet applied. */
  pending: number;
  /** The database holds a migration later than any this build knows: written by a newer version. */
  newer: boolean;
}

/** Reads drizzle's own bookkeeping (`__drizzle_migrations`, ordered by `created_at` as its migrator does). */
export function schemaStanding(sqlite: Database.Database): SchemaStanding {
  const known = (knownMigrations ??= readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).map(
    (m) => m.folderMillis,
  ));
  const hasTable = sqlite
    .prepare("select 1 from sqlite_master where type = 'table' and name = '__drizzle_migrations'")
    .get();
  const last = hasTable
    ? Number(sqlite.prepare('select max(created_at) from __drizzle_migrations').pluck().get() ?? 0)
    : 0;
  return { pending: known.filter((when) => when > last).length, newer: known.every((when) => last > when) };
}

/** Refuses, before anything is written, a database that a newer version of coworker-mirror migrated. */
export function refuseNewerSchema(sqlite: Database.Database, file: string): void {
  if (!schemaStanding(sqlite).newer) return;
  throw new MirrorError(
    'DB_TOO_NEW',
    `database ${file} was written by a newer version of coworker-mirror (it holds a migration this build ` +
      'does not know); nothing was changed. Run the newer version, or point --db at another database',
    { file },
  );
}
