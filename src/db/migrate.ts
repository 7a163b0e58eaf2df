import type Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { MirrorError } from '../errors.js';
import { knownMigrations, migrationsFolder } from './migration-files.js';
import { schemaStanding } from './sqlite/connection.js';

export type { SchemaStanding } from './migration-files.js';
export { schemaStanding };

/**
 * Applies the committed drizzle-kit migrations (migrations/sqlite/); the one code path for CLI,
 * server, tests and Docker. It keeps drizzle's bookkeeping (`__drizzle_migrations`, same rows) but
 * reads it and applies inside one BEGIN IMMEDIATE: drizzle's own migrator reads before it begins,
 * so two processes opening one new file both saw nothing applied and the second died on
 * "CREATE TABLE … already exists". Now the second waits (busy_timeout) and finds nothing to do.
 */
export function migrate(db: BetterSQLite3Database<Record<string, unknown>>): void {
  // A migration that rebuilds a table (coworkers_without_rowid) drops one that others reference:
  // SQLite's procedure for that runs with foreign keys off, which only takes effect outside a
  // transaction, and checks them all before committing (below).
  const enforced = db.get<{ foreign_keys: number }>(sql`PRAGMA foreign_keys`)?.foreign_keys === 1;
  if (enforced) db.run(sql`PRAGMA foreign_keys = OFF`);
  try {
    applyMigrations(db);
  } finally {
    if (enforced) db.run(sql`PRAGMA foreign_keys = ON`);
  }
}

function applyMigrations(db: BetterSQLite3Database<Record<string, unknown>>): void {
  try {
    db.transaction(
      (tx) => {
        tx.run(sql`CREATE TABLE IF NOT EXISTS __drizzle_migrations (
          id SERIAL PRIMARY KEY,
          hash text NOT NULL,
          created_at numeric
        )`);
        const last = tx.get<{ at: number | null }>(
          sql`select max(created_at) as at from __drizzle_migrations`,
        );
        const lastApplied = Number(last?.at ?? 0);
        let applied = 0;
        for (const migration of knownMigrations('sqlite')) {
          if (migration.folderMillis <= lastApplied) continue;
          for (const statement of migration.sql) tx.run(sql.raw(statement));
          tx.run(
            sql`insert into __drizzle_migrations (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`,
          );
          applied++;
        }
        // Only after migrations ran: the check reads every referencing table whole, which every
        // open of a current database would pay (seconds at 1,000,000 entries), and a file damaged
        // in one page would no longer open for /readyz to say so.
        if (applied === 0) return;
        const broken = tx.all<{ table: string }>(sql`PRAGMA foreign_key_check`);
        if (broken.length > 0) {
          throw new Error(`foreign keys broken in ${[...new Set(broken.map((b) => b.table))].join(', ')}`);
        }
      },
      { behavior: 'immediate' },
    );
  } catch (cause) {
    throw new MirrorError(
      'DB_ERROR',
      `database migration failed: ${(cause as Error).message}`,
      { migrationsFolder: migrationsFolder('sqlite') },
      { cause },
    );
  }
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
