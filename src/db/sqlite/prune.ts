import type { PruneOutcome, PruneRequest } from '../store.js';
import type { SqliteHandle } from './handle.js';
import { prune } from '../prune.js';
import { assertUnlocked } from './run-lock.js';
import { settle, sqliteSqlPort, transactionPortOf, withinTransaction } from './sql-port.js';

/**
 * The prune on SQLite: one write transaction that first makes sure no sync holds the lock (a
 * `running` row of a live holder; none can be written while this transaction lasts), with
 * `secure_delete` on, so every deleted row's bytes are overwritten with zeros in the pages written,
 * freed pages included. That is not enough for a forgotten person: a row an earlier sync updated
 * (a version closed) left its old copy in its page's free space, which only a rebuild clears, so
 * a prune that forgot someone ends with VACUUM. Then a TRUNCATE checkpoint copies the pages into
 * the database file and empties the WAL, where older copies of the pages were. A reader of
 * another connection still on an older snapshot can keep the checkpoint from finishing:
 * `scrubbed` then says so.
 */
export async function pruneSqlite(store: SqliteHandle, request: PruneRequest): Promise<PruneOutcome> {
  const { sqlite } = store;
  const secureDelete = sqlite.pragma('secure_delete', { simple: true }) as number;
  sqlite.pragma('secure_delete = on');
  try {
    return await prune(
      transactionPortOf(sqlite),
      request,
      (work) =>
        withinTransaction(
          sqlite,
          () => {
            assertUnlocked(store, new Date(request.now));
            return work(sqliteSqlPort((sql) => sqlite.prepare(sql)));
          },
          true,
        ),
      (work) =>
        settle(() => {
          // Still with secure_delete on: VACUUM's new pages inherit it, and are zeroed before they
          // are filled (without it, a page built in a reused buffer keeps that buffer's old bytes).
          if (work.personal && !store.immutable) sqlite.exec('vacuum');
          return work.deleted ? checkpoint(store) : null;
        }),
    );
  } finally {
    sqlite.pragma(`secure_delete = ${secureDelete}`);
  }
}

/** Empties the WAL into the database file; null when done, else why not. */
function checkpoint(store: SqliteHandle): string | null {
  if (store.immutable || store.sqlite.pragma('journal_mode', { simple: true }) !== 'wal') return null;
  const [result] = store.sqlite.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number }[];
  if (result === undefined || result.busy === 0) return null;
  return (
    'another connection was reading an older state, so the write-ahead log still holds copies of ' +
    'deleted pages until a later checkpoint overwrites them (stop the server and run prune again to be sure)'
  );
}
