import type Database from 'better-sqlite3';
import { newConnection, schemaStanding, writableOnDisk } from './connection.js';
import { mediaRunsByIds } from '../media-reads.js';
import { runAsSeen } from '../run-liveness.js';
import type { Store } from '../store.js';
import { prepared } from '../prepared.js';
import { runRows } from '../run-reads.js';
import { sqliteSqlPort } from './sql-port.js';

/** What `runs` reads: the store's own operations, and the close that ends the connection. */
export type RunReader = Pick<Store, 'listRuns' | 'mediaRunsByIds'> & { close(): void };

/**
 * The runs of a SQLite database read without the ORM or the migrator (loading them would make
 * `runs` start several times slower than a bare node), or null when only the full open
 * (`openStore`) may read it: no file (it says DB_NOT_FOUND), a file or folder it must open
 * read-only, a schema this build would migrate or refuse. A reader records nothing: a run whose holder died reads as aborted, as on a
 * read-only connection, and is recorded by the next process that opens the database to write.
 */
export function openRunReader(file: string): RunReader | null {
  // A file the full open would open read-only (a 0444 file, even for root) is left to it.
  if (!writableOnDisk(file)) return null;
  let sqlite: Database.Database | undefined;
  try {
    sqlite = newConnection(file, { fileMustExist: true });
    sqlite.pragma('busy_timeout = 5000');
    const standing = schemaStanding(sqlite);
    if (standing.pending > 0 || standing.newer) throw new Error('not current');
  } catch {
    // Not a database, not ours, or not current: the full open says what to do with it.
    sqlite?.close();
    return null;
  }
  const handle = { sqlite, file };
  const port = sqliteSqlPort((sql) => prepared(sqlite, sql));
  return {
    listRuns: async (options) => (await runRows(port, options)).map((run) => runAsSeen(handle, run)),
    mediaRunsByIds: (runIds) => mediaRunsByIds(port, runIds),
    close: () => sqlite.close(),
  };
}
