import type Database from 'better-sqlite3';
import { prepared } from '../prepared.js';
import type { OutboxPort } from '../outbox-port.js';
import type { SqlPort, TransactionPort } from '../sql-port.js';

export const settle = <T>(work: () => T): Promise<T> => new Promise<T>((resolve) => resolve(work()));

/** The port over one connection's statements, as `prepare` makes (or keeps) them. */
export function sqliteSqlPort(prepare: (sql: string) => Database.Statement): SqlPort {
  return {
    dialect: 'sqlite',
    rows: <T extends unknown[]>(sql: string, params: readonly unknown[] = []) =>
      settle(
        () =>
          prepare(sql)
            .raw(true)
            .all(...params) as T[],
      ),
    values: <T>(sql: string, params: readonly unknown[] = []) =>
      settle(
        () =>
          prepare(sql)
            .pluck(true)
            .all(...params) as T[],
      ),
    run: (sql, params = []) => settle(() => prepare(sql).run(...params).changes),
    insert: (table, columns, rows, onConflict = '') =>
      settle(() => {
        const names = columns.map((c) => c.name);
        const insert = prepare(
          `insert into ${table} (${names.join(', ')}) values (${names.map(() => '?').join(', ')}) ${onConflict}`,
        );
        for (const row of rows) insert.run(...row);
      }),
    insertWithIds: (table, columns, rows) =>
      settle(() => {
        const names = columns.map((c) => c.name);
        const insert = prepare(
          `insert into ${table} (${names.join(', ')}) values (${names.map(() => '?').join(', ')})`,
        );
        return rows.map((row) => Number(insert.run(...row).lastInsertRowid));
      }),
    list: (_type, values) => ({ sql: '(select value from json_each(?))', param: JSON.stringify(values) }),
    oneOf: (column, _type, values) => ({
      sql: `${column} in (select value from json_each(?))`,
      param: JSON.stringify(values),
    }),
  };
}

/** `work` in one transaction of `sqlite` (`write`: taking the write lock at once). */
export async function withinTransaction<T>(
  sqlite: Database.Database,
  work: () => Promise<T>,
  write: boolean,
): Promise<T> {
  sqlite.exec(write ? 'begin immediate' : 'begin');
  try {
    const result = await work();
    sqlite.exec('commit');
    return result;
  } catch (error) {
    if (sqlite.inTransaction) sqlite.exec('rollback');
    throw error;
  }
}

const turns = new WeakMap<Database.Database, Promise<unknown>>();

/**
 * `work` in the connection's write turn: its writers take turns, since between the awaits of one
 * another caller on this connection would otherwise find a transaction already open, and join it.
 * `work` opens its transaction itself (a run's commit first sets a pragma that cannot change inside one).
 */
export function inWriteTurn<T>(sqlite: Database.Database, work: () => Promise<T>): Promise<T> {
  const mine = (turns.get(sqlite) ?? Promise.resolve()).then(work);
  turns.set(
    sqlite,
    mine.catch(() => undefined),
  );
  return mine;
}

/**
 * The port over `sqlite` with write transactions, each in the connection's write turn. One asked
 * for inside a transaction that is not the port's (a better-sqlite3 `transaction()`) joins it.
 */
function sqliteTransactionPort(
  sqlite: Database.Database,
  prepare: (sql: string) => Database.Statement,
): TransactionPort {
  const port = sqliteSqlPort(prepare);
  return {
    ...port,
    write: <T>(work: (tx: SqlPort) => Promise<T>): Promise<T> =>
      inWriteTurn(sqlite, () =>
        sqlite.inTransaction ? work(port) : withinTransaction(sqlite, () => work(port), true),
      ),
  };
}

const ports = new WeakMap<Database.Database, TransactionPort>();

/** The one transaction port of a connection: every caller's transactions on it take turns. */
export function transactionPortOf(sqlite: Database.Database): TransactionPort {
  let port = ports.get(sqlite);
  if (!port) ports.set(sqlite, (port = sqliteTransactionPort(sqlite, (sql) => prepared(sqlite, sql))));
  return port;
}

const outboxPorts = new WeakMap<Database.Database, OutboxPort>();

/** The outbox's port over a connection: its workers share the process, so there is nothing to announce. */
export function outboxPortOf(sqlite: Database.Database): OutboxPort {
  let port = outboxPorts.get(sqlite);
  if (!port)
    outboxPorts.set(sqlite, (port = { ...transactionPortOf(sqlite), announce: () => Promise.resolve() }));
  return port;
}
