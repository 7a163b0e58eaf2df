import type { Statement } from 'better-sqlite3';
import { MirrorError } from '../../errors.js';
import type { MirrorDatabase } from '../open.js';
import { latestSucceededRun } from '../queries.js';
import { openRunStage, type RunStage, type StageConnection, type StageDialect } from '../run-stage.js';
import { writeMediaRows } from './media-commit.js';
import { writeOutbox } from './outbox.js';
import { markSucceeded } from './run-commit.js';

const settle = <T>(work: () => T): Promise<T> => new Promise<T>((resolve) => resolve(work()));

/**
 * A run's stage in TEMP tables of the store's own connection. `temp_store = file`: the staged
 * listing lives in a temporary file beside nothing (never in the heap, never in the main file),
 * deleted when the connection closes, or by the OS when the process dies.
 */
export function openSqliteStage(store: MirrorDatabase, runId: number): Promise<RunStage> {
  assertRunning(store, runId);
  return openRunStage(sqliteStageDialect(store));
}

/** Statements prepared once per stage: a statement over a temp table must not outlive the table. */
function statementCache(sqlite: MirrorDatabase['sqlite']): (sql: string) => Statement {
  const statements = new Map<string, Statement>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = sqlite.prepare(sql)));
    return statement;
  };
}

function sqliteStageDialect(store: MirrorDatabase): StageDialect {
  const { sqlite } = store;
  sqlite.pragma('temp_store = file');
  const prepare = statementCache(sqlite);
  const conn: StageConnection = {
    rows: <T extends unknown[]>(sql: string, params: readonly unknown[] = []) =>
      settle(
        () =>
          prepare(sql)
            .raw(true)
            .all(...params) as T[],
      ),
    run: (sql, params = []) =>
      settle(() => {
        prepare(sql).run(...params);
      }),
    insert: (table, columns, rows) =>
      settle(() => {
        const names = columns.map((c) => c.name);
        const insert = prepare(
          `insert into ${table} (${names.join(', ')}) values (${names.map(() => '?').join(', ')})`,
        );
        for (const row of rows) insert.run(...row);
      }),
    list: (_type, values) => ({ sql: '(select value from json_each(?))', param: JSON.stringify(values) }),
    transaction: async (work, write) => {
      sqlite.exec(write ? 'begin immediate' : 'begin');
      try {
        const result = await work();
        sqlite.exec('commit');
        return result;
      } catch (error) {
        if (sqlite.inTransaction) sqlite.exec('rollback');
        throw error;
      }
    },
  };
  return {
    conn,
    lastSeen: () => settle(() => latestSucceededRun(store)),
    commit: (commit, statements, entries) =>
      settle(() =>
        sqlite
          .transaction(() => {
            assertRunning(store, commit.runId);
            for (const [sql, params] of statements) prepare(sql).run(...params);
            markSucceeded(store, commit, entries);
            // Media rows first: a notification's thumbnails are the media this run holds.
            if (commit.media) writeMediaRows(store, commit.runId, commit.media);
            if (commit.outbox) writeOutbox(store, commit.runId, commit.outbox);
            if (commit.notify) writeOutbox(store, commit.runId, commit.notify);
          })
          .immediate(),
      ),
    release: () => Promise.resolve(),
  };
}

function assertRunning(store: MirrorDatabase, runId: number): void {
  const status = store.sqlite.prepare('select status from runs where id = ?').pluck().get(runId) as
    string | undefined;
  if (status !== 'running') {
    throw new MirrorError(
      'RUN_ABORTED',
      `run ${runId} is no longer running (status ${status ?? 'missing'}); nothing stored`,
      {
        runId,
      },
    );
  }
}
