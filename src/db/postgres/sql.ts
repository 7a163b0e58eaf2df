import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from './schema.js';
import type { PostgresDb } from './open.js';

// The few ways the PostgreSQL store speaks to the server: a typed query on the pool or on a
// transaction's client, and one transaction per write operation.

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

/** Rows of a parameterised query, as objects. */
export async function rows<T>(db: Queryable, text: string, values: unknown[] = []): Promise<T[]> {
  return (await db.query<T & pg.QueryResultRow>({ text, values, types })).rows;
}

/**
 * Rows of a named prepared statement: parsed and planned once per connection, not per call (the
 * plan of a short read can cost more than running it). Only for SQL built from constants.
 */
export async function preparedRows<T>(
  db: Queryable,
  name: string,
  text: string,
  values: unknown[] = [],
  rowMode?: 'array',
): Promise<T[]> {
  const query = { name, text, values, types, ...(rowMode === undefined ? {} : { rowMode }) };
  return (await db.query<T & pg.QueryResultRow>(query)).rows;
}

/** The first row of a query, or undefined. */
export async function one<T>(db: Queryable, text: string, values: unknown[] = []): Promise<T | undefined> {
  return (await rows<T>(db, text, values))[0];
}

/** Rows as arrays of column values (no per-row object): for the large reads. */
export async function tuples<T extends unknown[]>(
  db: Queryable,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  return (await db.query<T>({ text, values, types, rowMode: 'array' })).rows;
}

/** How many rows a statement touched. */
export async function run(db: Queryable, text: string, values: unknown[] = []): Promise<number> {
  return (await db.query({ text, values, types })).rowCount ?? 0;
}

/** A transaction's client and a drizzle handle over that same client. */
export interface Tx {
  /** A pooled client, or a connection of the run's own (its stage). */
  client: pg.ClientBase;
  db: PostgresDb;
}

/**
 * Runs `work` in one transaction on one pooled connection: committed when it resolves, rolled
 * back when it throws. A client whose rollback failed (a lost connection) is destroyed, not reused.
 */
export async function transaction<T>(pool: pg.Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    return await withinTransaction(
      client,
      () => work({ client, db: drizzle({ client, schema }) }),
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
