import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { standingOf, type SchemaStanding } from '../migration-times.js';

// Opening a SQLite file, light enough for the reader of `runs` (run-reader.ts), which must not load
// the ORM: the connection, what the disk allows it, and where its schema stands.

/**
 * A better-sqlite3 connection, with SQLite's URI file names on: `immutable` exists only as a URI
 * parameter, and better-sqlite3 decides once per process, at its first open, from SQLITE_USE_URI
 * (an explicit SQLITE_USE_URI=0 still wins). Every open goes through here, so whichever comes first
 * decides it the same way, and importing a module changes nothing.
 */
export function newConnection(file: string, options: Database.Options): Database.Database {
  process.env.SQLITE_USE_URI ??= '1';
  return new Database(file, options);
}

/** True when the file or its folder cannot (or, by its mode, should not) be written; the file must exist. */
export function readOnlyOnDisk(file: string): boolean {
  // The mode bits count too: root may write anything, yet a file chmod'ed 0444 means "leave it".
  return [file, dirname(file)].some((path) => (statSync(path).mode & 0o222) === 0 || !mayWrite(path));
}

/** Whether this process may write `path`, a folder or a file. */
export function mayWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** An existing file this process may open to write, by the same rules as the full open. */
export function writableOnDisk(file: string): boolean {
  return existsSync(file) && !readOnlyOnDisk(file);
}

/** Reads drizzle's own bookkeeping (`__drizzle_migrations`, ordered by `created_at` as its migrator does). */
export function schemaStanding(sqlite: Database.Database): SchemaStanding {
  const hasTable = sqlite
    .prepare("select 1 from sqlite_master where type = 'table' and name = '__drizzle_migrations'")
    .get();
  const last = hasTable
    ? Number(sqlite.prepare('select max(created_at) from __drizzle_migrations').pluck().get() ?? 0)
    : 0;
  return standingOf('sqlite', last);
}
