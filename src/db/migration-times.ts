import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MirrorError } from '../errors.js';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The committed migrations of one dialect. src/db/ and dist/db/ sit at the same depth, so this
 * resolves to the repository's migrations/<dialect>/ in both.
 */
export function migrationsFolder(dialect: Dialect): string {
  return fileURLToPath(new URL(`../../migrations/${dialect}`, import.meta.url));
}

const times = new Map<Dialect, number[]>();

/**
 * When each migration of this build was generated: drizzle's `folderMillis`, which its migrators
 * take from the journal's `when`. Read from the journal alone, so asking whether a database is
 * current costs neither the ORM's migrator nor the SQL files (`runs` asks it at every call).
 */
export function knownMigrationTimes(dialect: Dialect): number[] {
  let list = times.get(dialect);
  if (list) return list;
  const journal = join(migrationsFolder(dialect), 'meta', '_journal.json');
  const { entries } = JSON.parse(readFileSync(journal, 'utf8')) as { entries: { when: number }[] };
  times.set(dialect, (list = entries.map((entry) => entry.when)));
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
  const whens = knownMigrationTimes(dialect);
  return {
    pending: whens.filter((when) => when > lastApplied).length,
    newer: whens.every((when) => lastApplied > when),
  };
}

/** Refuses a database a newer version migrated; `setting` is what points at it (`--db`, `DATABASE_URL`). */
export function newerSchemaError(
  database: string,
  setting: string,
  details: Record<string, unknown>,
): MirrorError {
  return new MirrorError(
    'DB_TOO_NEW',
    `database ${database} was written by a newer version of coworker-mirror (it holds a migration this build ` +
      `does not know); nothing was changed. Run the newer version, or point ${setting} at another database`,
    details,
  );
}
