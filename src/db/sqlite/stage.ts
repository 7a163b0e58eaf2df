import type { Statement } from 'better-sqlite3';
import type { SqliteHandle } from './handle.js';
import { latestSucceededRun } from '../run-reads.js';
import {
  openRunStage,
  type RunStage,
  type StageConnection,
  type StageDialect,
  type StageStatement,
} from '../run-stage.js';
import { BULK_TABLES, checkRunReferences, holdsNoListing, withBulkForeignKeys } from './bulk-commit.js';
import { writeMediaRows } from '../media-commit.js';
import { writeRunOutboxes } from '../run-outbox.js';
import { assertStillRunning, markSucceeded } from '../run-ends.js';
import { inWriteTurn, settle, sqliteSqlPort, transactionPortOf, withinTransaction } from './sql-port.js';

/**
 * A run's stage in TEMP tables of the store's own connection. `temp_store = file`: the staged
 * listing lives in a temporary file beside nothing (never in the heap, never in the main file),
 * deleted when the connection closes, or by the OS when the process dies.
 */
export async function openSqliteStage(store: SqliteHandle, runId: number): Promise<RunStage> {
  await assertStillRunning(transactionPortOf(store.sqlite), runId);
  return openRunStage(sqliteStageDialect(store));
}

/** Statements prepared once per stage: a statement over a temp table must not outlive the table. */
function statementCache(sqlite: SqliteHandle['sqlite']): (sql: string) => Statement {
  const statements = new Map<string, Statement>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = sqlite.prepare(sql)));
    return statement;
  };
}

/**
 * The page cache while a stage is open, in KiB (SQLite's negative form), instead of the 16 MiB
 * better-sqlite3 builds SQLite with. Each sort (every index built once a table is full, each ORDER
 * BY of the commit) may hold that much again, and the allocator keeps it: with 16 MiB a
 * million-entry first sync went over its memory goal, with 4 MiB it keeps within it in the same
 * time (docs/benchmarks.md). A larger cache bought no time: the
 * stage reads and writes its tables in key order (run-stage.ts).
 */
const STAGE_CACHE_SIZE = -4000;

/**
 * Rows `analyze` reads of each index of a stage table (SQLite's `analysis_limit`): the planner
 * needs the tables' rough shape, not an exact count. A full `analyze` reads every index of a large
 * stage whole, for statistics hardly different from these.
 */
const STAGE_ANALYSIS_LIMIT = 1000;

/**
 * Helper threads SQLite's sorter may start (`threads`): the stage's index builds, windows and the
 * commit's index builds are sorts of up to a million rows, run once the crawl is over, when the
 * upstream no longer keeps the other core busy. One helper builds a large index sooner than none
 * (sqlite3 shell); two were no sooner than one.
 */
const STAGE_SORT_THREADS = 1;

/** The stage's own pragmas (see above), set while it is open. */
const STAGE_PRAGMAS = {
  cache_size: STAGE_CACHE_SIZE,
  analysis_limit: STAGE_ANALYSIS_LIMIT,
  threads: STAGE_SORT_THREADS,
} as const;

/** Sets the stage's pragmas; answers what puts the connection's own back. */
function stagePragmas(sqlite: SqliteHandle['sqlite']): () => void {
  const names = Object.keys(STAGE_PRAGMAS) as (keyof typeof STAGE_PRAGMAS)[];
  const own = names.map((name) => [name, sqlite.pragma(name, { simple: true }) as number] as const);
  for (const name of names) sqlite.pragma(`${name} = ${STAGE_PRAGMAS[name]}`);
  return () => {
    for (const [name, value] of own) sqlite.pragma(`${name} = ${value}`);
  };
}

function sqliteStageDialect(store: SqliteHandle): StageDialect {
  const { sqlite } = store;
  sqlite.pragma('temp_store = file');
  const restorePragmas = stagePragmas(sqlite);
  const prepare = statementCache(sqlite);
  const conn: StageConnection = {
    ...sqliteSqlPort(prepare),
    byIds: (subquery) => `id in (${subquery})`,
    transaction: (work, write) => withinTransaction(sqlite, work, write),
  };
  return {
    conn,
    lastSeen: async () => {
      const last = await latestSucceededRun(conn);
      return last && { id: last.id, finishedAt: last.finishedAt };
    },
    commit: (commit, statements, entries) =>
      // The connection's write turn: another writer on it waits for the commit, never joins it.
      inWriteTurn(sqlite, () =>
        withBulkForeignKeys(sqlite, holdsNoListing(sqlite), () =>
          withinTransaction(
            sqlite,
            async () => {
              const tx = transactionPortOf(sqlite);
              await assertStillRunning(tx, commit.runId);
              runListing(sqlite, prepare, statements);
              checkRunReferences(sqlite, commit.runId);
              await markSucceeded(tx, commit, entries);
              // Media rows first: a notification's thumbnails are the media this run holds.
              if (commit.media) await writeMediaRows(tx, commit.runId, commit.media);
              await writeRunOutboxes(tx, commit.runId, [commit.outbox, commit.notify]);
            },
            true,
          ),
        ),
      ),
    release: () => settle(restorePragmas),
  };
}

/** The listing's statements; into an empty store, each table's indexes built after its insert. */
function runListing(
  sqlite: SqliteHandle['sqlite'],
  prepare: (sql: string) => Statement,
  statements: readonly StageStatement[],
): void {
  const deferred = dropIndexesOfEmptyStore(sqlite);
  for (const [sql, params, step] of statements) {
    if (step === 'new-version-ids') assignNewVersionIds(prepare, sql, params);
    else prepare(sql).run(...params);
    const table = INSERT_INTO.exec(sql)?.[1];
    if (table !== undefined) buildIndexes(sqlite, deferred, table);
  }
  for (const table of [...deferred.keys()]) buildIndexes(sqlite, deferred, table);
}

/**
 * The new versions' ids into their placements by rank: the versions were inserted by one INSERT …
 * SELECT in listing order, under the write lock, into an AUTOINCREMENT table, so SQLite numbered
 * them one after another up to its sequence; the n-th new placement in listing order holds the
 * n-th id. One pass in listing order, where the lookup by (uuid, slot, run) seeks the uuid index
 * once per placement in random order (a large part of a big first sync). Both ends are
 * checked against the versions themselves; should they ever disagree, the lookup does it.
 */
function assignNewVersionIds(
  prepare: (sql: string) => Statement,
  lookup: string,
  params: readonly unknown[],
): void {
  const [runId] = params;
  const [placed, low, high] = prepare(
    'select count(*), min(pos), max(pos) from stage_places where version_id is null',
  )
    .raw()
    .get() as [number, number | null, number | null];
  if (placed === 0 || low === null || high === null) return;
  const last = prepare(`select seq from sqlite_sequence where name = 'versions'`).pluck().get() as number;
  if (high - low + 1 === placed) {
    // Every position from low to high is new (a first sync: all of them): the rank is the position's
    // offset, no sort needed (a sort fewer in a first sync's commit).
    prepare('update stage_places set version_id = pos - ? + ? where version_id is null').run(
      low,
      last - placed + 1,
    );
  } else {
    prepare(
      `update stage_places set version_id = r.id
         from (select pos, ? + row_number() over (order by pos) as id from stage_places where version_id is null) r
        where r.pos = stage_places.pos`,
    ).run(last - placed);
  }
  const matching = prepare(
    `select count(*) from stage_places p join versions v on v.id = p.version_id
      where p.uuid is not null and p.version_id in (?, ?)
        and v.uuid = p.uuid and v.slot = p.slot and v.valid_from_run = ?`,
  )
    .pluck()
    .get(last - placed + 1, last, runId) as number;
  if (matching === (placed === 1 ? 1 : 2)) return;
  prepare('update stage_places set version_id = null where uuid is not null').run();
  prepare(lookup).run(...params);
}

const INSERT_INTO = /^\s*insert into (\w+)/i;

/**
 * When the store holds no listing yet (a first sync), the indexes of the tables the commit fills
 * are dropped and each table's are built again right after its insert, with the SQL they were
 * made with: one sort per index instead of a b-tree kept up row by row in random uuid order,
 * faster and packed. All inside the commit's transaction: a failed or killed commit
 * leaves them as they were. Answers the dropped indexes' SQL by table.
 */
function dropIndexesOfEmptyStore(sqlite: SqliteHandle['sqlite']): Map<string, string[]> {
  const deferred = new Map<string, string[]>();
  if (!holdsNoListing(sqlite)) return deferred;
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
  return deferred;
}

function buildIndexes(sqlite: SqliteHandle['sqlite'], deferred: Map<string, string[]>, table: string): void {
  for (const sql of deferred.get(table) ?? []) sqlite.exec(sql);
  deferred.delete(table);
}
