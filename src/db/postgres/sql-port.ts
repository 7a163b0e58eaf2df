import type pg from 'pg';
import type { OutboxPort } from '../outbox-port.js';
import type { SqlPort, TransactionPort } from '../sql-port.js';
import { announceOutboxChange } from './commit-watch.js';
import { run, transaction, tuples, type Queryable } from './sql.js';

/** `?` placeholders as PostgreSQL's `$n`. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export function pgSqlPort(db: Queryable): SqlPort {
  return {
    rows: <T extends unknown[]>(sql: string, params: readonly unknown[] = []) =>
      tuples<T>(db, numbered(sql), [...params]),
    run: (sql, params = []) => run(db, numbered(sql), [...params]),
    list: (type, values) => ({ sql: `(select unnest(?::${type}[]))`, param: values }),
  };
}

/** The port over the pool, each write transaction on one pooled connection. */
export function pgTransactionPort(pool: pg.Pool): TransactionPort {
  return {
    ...pgSqlPort(pool),
    dialect: 'postgres',
    write: (work) => transaction(pool, ({ client }) => work(pgSqlPort(client))),
  };
}

/** The outbox's port over the pool: a change outside a run is announced to every instance's workers. */
export function pgOutboxPort(pool: pg.Pool): OutboxPort {
  return { ...pgTransactionPort(pool), announce: () => announceOutboxChange(pool) };
}
