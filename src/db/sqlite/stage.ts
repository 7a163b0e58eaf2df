import type { Statement } from 'better-sqlite3';
import type { SqliteHandle } from './handle.js';
import type { RunStage } from '../run-commit.js';
import { openRunStage } from '../run-stage.js';
import { BULK_TABLES, checkRunReferences, holdsNoListing, withBulkForeignKeys } from './bulk-commit.js';
import { assertStillRunning } from '../run-ends.js';
import { inWriteTurn, settle, sqliteSqlPort, transactionPortOf, withinTransaction } from './sql-port.js';

/** The stage's own pragmas, set while it is open. */
const STAGE_PRAGMAS = {
  // The page cache in KiB (SQLite's negative form), instead of the 16 MiB better-sqlite3 builds
  // SQLite with. Each sort (every index built once a table is full, each ORDER BY of the commit) may
  // hold that much again, and the allocator keeps it: with 16 MiB a million-entry first sync went
  // over its memory goal, with 4 MiB it keeps within it in the same time (docs/benchmarks.md). A
  // larger cache bought no time: the stage reads and writes its tables in key order (run-stage.ts).
  cache_size: -4000,
  // Rows `analyze` reads of each index of a stage table: the planner needs the tables' rough shape,
  // not an exact count. A full `analyze` reads every index of a large stage whole, for statistics
  // hardly different from these.
  analysis_limit: 1000,
  // Helper threads SQLite's sorter may start: the stage's index builds, windows and the commit's
  // index builds are sorts of up to a million rows, run once the crawl is over, when the upstream
  // no longer keeps the other core busy. One helper builds a large index sooner than none (sqlite3
  // shell); two were no sooner than one.
  threads: 1,
} as const;

/** Sets the stage's pragmas; answers what puts the connection's own back. */
function stagePragmas(sqlite: SqliteHandle['sqlite']): () => void {
  const own = Object.keys(STAGE_PRAGMAS).map(
    (name) => `${name} = ${sqlite.pragma(name, { simple: true }) as number}`,
  );
  for (const [name, value] of Object.entries(STAGE_PRAGMAS)) sqlite.pragma(`${name} = ${value}`);
  return () => own.forEach((pragma) => sqlite.pragma(pragma));
}

/**
 * A run's stage in TEMP tables of the store's own connection. `temp_store = file`: the staged
 * listing lives in a temporary file beside nothing (never in the heap, never in the main file),
 * deleted when the connection closes, or by the OS when the process dies.
 */
export async function openSqliteStage(store: SqliteHandle, runId: number): Promise<RunStage> {
  const { sqlite } = store;
  await assertStillRunning(transactionPortOf(sqlite), runId);
  sqlite.pragma('temp_store = file');
  const restorePragmas = stagePragmas(sqlite);
  // Statements prepared once per stage: a statement over a temp table must not outlive the table.
  const statements = new Map<string, Statement>();
  return openRunStage({
    conn: {
      ...sqliteSqlPort((sql) => {
        const statement = statements.get(sql) ?? sqlite.prepare(sql);
        statements.set(sql, statement);
        return statement;
      }),
      byIds: (subquery) => `id in (${subquery})`,
      transaction: (work) => withinTransaction(sqlite, work, false),
    },
    commit: (runId, write) =>
      // The connection's write turn: another writer on it waits for the commit, never joins it.
      inWriteTurn(sqlite, () =>
        withBulkForeignKeys(sqlite, () =>
          withinTransaction(
            sqlite,
            async () => {
              await write(deferIndexesOfEmptyStore(sqlite));
              checkRunReferences(sqlite, runId);
            },
            true,
          ),
        ),
      ),
    release: () => settle(restorePragmas),
  });
}

/**
 * When the store holds no listing yet (a first sync), the indexes of the tables the commit fills
 * are dropped and each table's are built again right after its insert, with the SQL they were
 * made with: one sort per index instead of a b-tree kept up row by row in random uuid order,
 * faster and packed. All inside the commit's transaction: a failed or killed commit
 * leaves them as they were. Answers what builds a table's indexes (every table's left, without one).
 */
function deferIndexesOfEmptyStore(sqlite: SqliteHandle['sqlite']): (table?: string) => void {
  const deferred = new Map<string, string[]>();
  if (holdsNoListing(sqlite)) {
    const indexes = sqlite
      .prepare(
        `select tbl_name, name, sql from sqlite_schema
          where type = 'index' and sql is not null and tbl_name in (${BULK_TABLES.map(() => '?').join(', ')})`,
      )
      .raw()
      .all(...BULK_TABLES) as [string, string, string][];
    for (const [table, name, sql] of indexes) {
      sqlite.exec(`drop index "${name}"`);
      deferred.set(table, [...(deferred.get(table) ?? []), sql]);
    }
  }
  return (table) => {
    for (const name of table === undefined ? [...deferred.keys()] : [table]) {
      for (const sql of deferred.get(name) ?? []) sqlite.exec(sql);
      deferred.delete(name);
    }
  };
}
