import pg from 'pg';

// The few ways the PostgreSQL store speaks to the server, under its port (sql-port.ts): one query
// on the pool or on a transaction's client, and one transaction per write operation.

/** A pool (each query on any free connection) or the one client of a transaction. */
export type Queryable = pg.Pool | pg.ClientBase;

const INT8 = 20;
/**
 * bigint (ids, count(*)) read as JS numbers, as better-sqlite3 reads SQLite's 64-bit integers and
 * as the drizzle schema's `mode: 'number'` does: every id and count stays far below 2^53.
 */
const int8AsNumber = (value: string): number => Number(value);
const types: pg.CustomTypesConfig = {
  getTypeParser: ((id: number, format?: 'text' | 'binary'): unknown =>
    id === INT8 ? int8AsNumber : pg.types.getTypeParser(id, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * One parameterised query. `array`: rows as arrays of column values (no object per row, for the
 * large reads). `name`: a named prepared statement, parsed and planned once per connection, not per
 * call (the plan of a short read can cost more than running it); only for SQL built from constants.
 */
export function query<T>(
  db: Queryable,
  text: string,
  values: unknown[] = [],
  options: { array?: boolean; name?: string | undefined } = {},
): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
  const { array = false, name } = options;
  return db.query<T & pg.QueryResultRow>({
    text,
    values,
    types,
    ...(array ? { rowMode: 'array' } : {}),
    ...(name === undefined ? {} : { name }),
  });
}

/** Rows of a parameterised query, as objects. */
export async function rows<T>(db: Queryable, text: string, values: unknown[] = []): Promise<T[]> {
  return (await query<T>(db, text, values)).rows;
}

/**
 * Runs `work` in one transaction on one pooled connection: committed when it resolves, rolled
 * back when it throws. A client whose rollback failed (a lost connection) is destroyed, not reused.
 */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    return await withinTransaction(
      client,
      () => work(client),
      () => (broken = true),
    );
  } finally {
    client.release(broken);
  }
}

/**
 * `work` between begin and commit on this client, rolled back when it throws; `onLost` hears of a
 * rollback that failed (the connection is then gone, and with it the transaction).
 */
export async function withinTransaction<T>(
  client: pg.ClientBase,
  work: () => Promise<T>,
  onLost: () => void = () => undefined,
): Promise<T> {
  await client.query('begin');
  try {
    const result = await work();
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(onLost);
    throw error;
  }
}
