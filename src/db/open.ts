import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { MirrorError } from '../errors.js';
import { migrate, refuseNewerSchema } from './migrate.js';
import * as schema from './schema.js';

export type Db = BetterSQLite3Database<typeof schema>;

export interface MirrorDatabase {
  readonly db: Db;
  /** The raw handle, for pragmas, the backup API and hot-path prepared statements. */
  readonly sqlite: Database.Database;
  readonly file: string;
  close(): void;
}

export interface OpenOptions {
  /** Apply pending migrations (default true). Read-only replicas of `serve` still migrate first. */
  migrate?: boolean;
  readonly?: boolean;
}

/**
 * Opens (creating if needed) the mirror database with the pragmas every process must agree on,
 * then applies the committed migrations. The same path runs in the CLI, the server, tests and Docker.
 */
export function openDatabase(file: string, options: OpenOptions = {}): MirrorDatabase {
  let sqlite: Database.Database;
  try {
    if (file !== ':memory:' && !options.readonly) mkdirSync(dirname(file), { recursive: true });
    sqlite = new Database(file, { readonly: options.readonly ?? false });
  } catch (cause) {
    throw new MirrorError(
      'DB_ERROR',
      `cannot open database ${file}: ${(cause as Error).message}`,
      { file },
      { cause },
    );
  }
  try {
    // WAL lets `serve` read while a sync commits in another process; NORMAL is durable at each
    // checkpoint and never corrupts on a crash, which is the promise here.
    if (!options.readonly) sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // A sync's write transaction can take a moment on a large listing; readers and a second
    // writer wait for it instead of failing with SQLITE_BUSY.
    sqlite.pragma('busy_timeout = 5000');
    const db = drizzle(sqlite, { schema });
    refuseNewerSchema(sqlite, file);
    if (options.migrate ?? !options.readonly) migrate(db);
    return { db, sqlite, file, close: () => sqlite.close() };
  } catch (cause) {
    sqlite.close();
    if (cause instanceof MirrorError) throw cause;
    throw new MirrorError(
      'DB_ERROR',
      `cannot prepare database ${file}: ${(cause as Error).message}`,
      { file },
      { cause },
    );
  }
}
