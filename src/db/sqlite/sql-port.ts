import type Database from 'better-sqlite3';
import { prepared } from '../prepared.js';
import type { OutboxPort } from '../outbox-port.js';
import type { InsertColumn, SqlPort, TransactionPort } from '../sql-port.js';

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
        const insert = prepare(insertSql(table, columns, onConflict));
        for (const row of rows) insert.run(...row);
      }),
    insertWithIds: (table, columns, rows) =>
      settle(() => {
        const insert = prepare(insertSql(table, columns, ''));
        return rows.map((row) => Number(insert.run(...row).lastInsertRowid));
      }),
    list: (_type, values) => ({ sql: '(select value from json_each(?))', param: JSON.stringify(values) }),
    oneOf: (column, _type, values) => ({
      sql: `${column} in (select value from json_each(?))`,
      param: JSON.stringify(values),
    }),
  };
}

function insertSql(table: string, columns: readonly InsertColumn[], onConflict: string): string {
  const names = columns.map((c) => c.name);
  return `insert into ${table} (${names.join(', ')}) values (${names.map(() => '?').join(', ')}) ${onConflict}`;
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

const noop = () => undefined;
const turns = new WeakMap<Database.Database, Promise<unknown>>();

/**
 * `work` in the connection's write turn: its writers take turns, since between the awaits of one
 * another caller on this connection would otherwise find a transaction already open, and join it.
 * `work` opens its transaction itself (a run's commit first sets a pragma that cannot change inside one).
 */
export function inWriteTurn<T>(sqlite: Database.Database, work: () => Promise<T>): Promise<T> {
  const mine = (turns.get(sqlite) ?? Promise.resolve()).then(work);
  turns.set(sqlite, mine.catch(noop));
  return mine;
}

const ports = new WeakMap<Database.Database, OutboxPort>();

/**
 * The one port of a connection with write transactions, each in the connection's write turn (one
 * asked for inside a transaction that is not the port's, a better-sqlite3 `transaction()`, joins
 * it), and the outbox's: its workers share the process, so there is nothing to announce.
 */
export function outboxPortOf(sqlite: Database.Database): OutboxPort {
  let port = ports.get(sqlite);
  if (port) return port;
  const plain = sqliteSqlPort((sql) => prepared(sqlite, sql));
  port = {
    ...plain,
    write: <T>(work: (tx: SqlPort) => Promise<T>): Promise<T> =>
      inWriteTurn(sqlite, () =>
        sqlite.inTransaction ? work(plain) : withinTransaction(sqlite, () => work(plain), true),
      ),
    announce: () => Promise.resolve(),
  };
  ports.set(sqlite, port);
  return port;
}

/** The connection's one transaction port: every caller's transactions on it take turns. */
export const transactionPortOf: (sqlite: Database.Database) => TransactionPort = outboxPortOf;
