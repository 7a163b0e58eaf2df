import Database from 'better-sqlite3';

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
