import type Database from 'better-sqlite3';
import { MirrorError } from '../errors.js';
import { knownMigrations, migrationsFolder } from './migration-files.js';
import { newerSchemaError } from './migration-times.js';
import { schemaStanding } from './sqlite/connection.js';

/**
 * Applies the committed drizzle-kit migrations (migrations/sqlite/); the one code path for CLI,
 * server, tests and Docker. It keeps drizzle's bookkeeping (`__drizzle_migrations`, same rows) but
 * reads it and applies inside one BEGIN IMMEDIATE: drizzle's own migrator reads before it begins,
 * so two processes opening one new file both saw nothing applied and the second died on
 * "CREATE TABLE … already exists". Here the second waits (busy_timeout) and finds nothing to do.
 */
export function migrate(sqlite: Database.Database): void {
  // A migration that rebuilds a table (coworkers_without_rowid) drops one that others reference:
  // SQLite's procedure for that runs with foreign keys off, which only takes effect outside a
  // transaction, and checks them all before committing (below).
  const enforced = sqlite.pragma('foreign_keys', { simple: true }) === 1;
  if (enforced) sqlite.pragma('foreign_keys = OFF');
  try {
    sqlite.transaction(() => applyMigrations(sqlite)).immediate();
  } catch (cause) {
    throw new MirrorError(
      'DB_ERROR',
      `database migration failed: ${(cause as Error).message}`,
      { migrationsFolder: migrationsFolder('sqlite') },
      { cause },
    );
  } finally {
    if (enforced) sqlite.pragma('foreign_keys = ON');
  }
}

// As every earlier version created it: SQLite keeps this text, spaces and all, in its schema.
const BOOKKEEPING_TABLE = `CREATE TABLE IF NOT EXISTS __drizzle_migrations (
          id SERIAL PRIMARY KEY,
          hash text NOT NULL,
          created_at numeric
        )`;

function applyMigrations(sqlite: Database.Database): void {
  sqlite.exec(BOOKKEEPING_TABLE);
  const lastApplied = Number(
    sqlite.prepare('select max(created_at) from __drizzle_migrations').pluck().get() ?? 0,
  );
  const pending = knownMigrations('sqlite').filter((migration) => migration.folderMillis > lastApplied);
  for (const migration of pending) {
    for (const statement of migration.sql) sqlite.prepare(statement).run();
    sqlite
      .prepare('insert into __drizzle_migrations (hash, created_at) values (?, ?)')
      .run(migration.hash, migration.folderMillis);
  }
  // Only after migrations ran: the check reads every referencing table whole, which every open of a
  // current database would pay (seconds at 1,000,000 entries), and a file damaged in one page would
  // no longer open for /readyz to say so.
  if (pending.length === 0) return;
  const broken = sqlite.pragma('foreign_key_check') as { table: string }[];
  if (broken.length > 0) {
    throw new Error(`foreign keys broken in ${[...new Set(broken.map((b) => b.table))].join(', ')}`);
  }
}

/** Refuses, before anything is written, a database that a newer version of coworker-mirror migrated. */
export function refuseNewerSchema(sqlite: Database.Database, file: string): void {
  if (schemaStanding(sqlite).newer) throw newerSchemaError(file, '--db', { file });
}
