import type pg from 'pg';
import { run, tuples } from './sql.js';

// Multi-row writes: one statement per chunk of rows, each column passed as one array parameter and
// spread by unnest(). A 100,000-entry commit is a few dozen round trips, not 100,000.

/** Rows per statement: bounds the parameter arrays (entry texts) held at once. */
const CHUNK_ROWS = 5_000;

export interface Column {
  name: string;
  /** The element's SQL type (`text`, `int`, `bigint`, `boolean`). */
  type: string;
}

function* chunks<T>(items: readonly T[]): Generator<readonly T[]> {
  for (let at = 0; at < items.length; at += CHUNK_ROWS) yield items.slice(at, at + CHUNK_ROWS);
}

const columnsOf = (rows: readonly (readonly unknown[])[], count: number): unknown[][] =>
  Array.from({ length: count }, (_, c) => rows.map((row) => row[c]));

/**
 * Inserts rows into a table with an identity `id`, the ids taken from its sequence in row order
 * (as SQLite's rowids ascend in insertion order); returns them in row order.
 */
export async function insertWithIds(
  client: pg.PoolClient,
  table: string,
  columns: readonly Column[],
  rows: readonly (readonly unknown[])[],
): Promise<number[]> {
  const ids: number[] = [];
  for (const chunk of chunks(rows)) {
    const taken = await tuples<[number]>(
      client,
      `select nextval(pg_get_serial_sequence($1, 'id')) from generate_series(1, $2)`,
      [table, chunk.length],
    );
    const chunkIds = taken.map(([id]) => id).sort((a, b) => a - b);
    const params = [chunkIds, ...columnsOf(chunk, columns.length)];
    const unnest = ['$1::bigint[]', ...columns.map((c, i) => `$${i + 2}::${c.type}[]`)].join(', ');
    await run(
      client,
      `insert into ${table} (id, ${columns.map((c) => c.name).join(', ')}) select * from unnest(${unnest})`,
      params,
    );
    ids.push(...chunkIds);
  }
  return ids;
}

/** Inserts rows, one statement per chunk; `suffix` (an ON CONFLICT clause) is appended as is. */
export async function insertMany(
  client: pg.PoolClient,
  table: string,
  columns: readonly Column[],
  rows: readonly (readonly unknown[])[],
  suffix = '',
): Promise<void> {
  for (const chunk of chunks(rows)) {
    const unnest = columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ');
    await run(
      client,
      `insert into ${table} (${columns.map((c) => c.name).join(', ')}) select * from unnest(${unnest}) ${suffix}`,
      columnsOf(chunk, columns.length),
    );
  }
}

/** `update <table> set <column> = <value> where id = any(ids)`, one statement per chunk. */
export async function setWhereIds(
  client: pg.PoolClient,
  table: string,
  assignment: string,
  value: unknown,
  ids: readonly number[],
): Promise<void> {
  for (const chunk of chunks(ids)) {
    await run(client, `update ${table} set ${assignment} = $1 where id = any($2::bigint[])`, [value, chunk]);
  }
}
