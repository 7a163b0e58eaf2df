import type pg from 'pg';
import type { OutboxPort } from '../outbox-port.js';
import type { SqlPort, TransactionPort } from '../sql-port.js';
import { insertMany, insertWithIds } from './bulk.js';
import { announce } from './commit-watch.js';
import { query, transaction, type Queryable } from './sql.js';

/** `?` placeholders as PostgreSQL's `$n`. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * A statement name per SQL text, the same on every connection: the server keeps a named statement
 * parsed and planned per connection, as SQLite's cache (src/db/prepared.ts) keeps one per text.
 */
const statementNames = new Map<string, string>();
/** Past this many texts (a query whose text varies with its input) reads are planned each time. */
const MAX_NAMED = 256;

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_NAMED) {
    name = `port_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * The port over a pool or one client. `prepare`: reads go through named prepared statements (a
 * store's reads, per request); the stage and the prune, whose statements run once, leave it off.
 */
export function pgSqlPort(db: Queryable, options: { prepare?: boolean } = {}): SqlPort {
  const rows = async <T extends unknown[]>(sql: string, params: readonly unknown[] = []): Promise<T[]> => {
    const text = numbered(sql);
    const name = options.prepare === true ? statementName(text) : undefined;
    return (await query<T>(db, text, [...params], { array: true, name })).rows;
  };
  return {
    dialect: 'postgres',
    rows,
    values: async <T>(sql: string, params: readonly unknown[] = []) =>
      (await rows<[T]>(sql, params)).map(([value]) => value),
    run: async (sql, params = []) => (await query(db, numbered(sql), [...params])).rowCount ?? 0,
    insert: (table, columns, values, onConflict) => insertMany(db, table, columns, values, onConflict),
    insertWithIds: (table, columns, values) => insertWithIds(db, table, columns, values),
    list: (type, values) => ({ sql: `(select unnest(?::${type}[]))`, param: values }),
    oneOf: (column, type, values) => ({ sql: `${column} = any(?::${type}[])`, param: values }),
  };
}

/** The port over the pool, each write transaction on one pooled connection. */
export function pgTransactionPort(pool: pg.Pool): TransactionPort {
  return {
    ...pgSqlPort(pool),
    write: (work) => transaction(pool, (client) => work(pgSqlPort(client))),
  };
}

/** The outbox's port over the pool: a change outside a run is announced to every instance's workers. */
export function pgOutboxPort(pool: pg.Pool): OutboxPort {
  return { ...pgTransactionPort(pool), announce: () => announce(pool, 'outbox') };
}
