import { query, type Queryable } from './sql.js';

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

/** Separates the texts of a column sent as one string; a null is the NULL mark alone. */
const UNIT = '\u001f';
const NULL_MARK = '\u001e';

/**
 * A text column as one string the server splits (`string_to_array`), when no value holds the
 * separator: node-postgres escapes a text[] parameter character by character in JavaScript, which
 * was most of a large first commit's time; a join is native.
 * Null when the column cannot be sent so (then it goes as an array, as before).
 */
function joinedText(values: readonly unknown[]): string | null {
  // string_to_array('') is an empty array, not one empty text.
  if (values.length === 1 && values[0] === '') return null;
  const texts: string[] = [];
  for (const value of values) {
    if (value === null) texts.push(NULL_MARK);
    else if (typeof value !== 'string' || value.includes(UNIT) || value === NULL_MARK) return null;
    else texts.push(value);
  }
  return texts.join(UNIT);
}

/** The parameters and unnest() arguments of a chunk's columns, from `$first` on. */
function unnestArguments(
  columns: readonly Column[],
  chunk: readonly (readonly unknown[])[],
  first: number,
): { params: unknown[]; args: string[] } {
  const params: unknown[] = [];
  const args = columnsOf(chunk, columns.length).map((values, i) => {
    const type = columns[i]?.type ?? 'text';
    const joined = type === 'text' ? joinedText(values) : null;
    params.push(joined ?? values);
    const n = first + i;
    return joined === null ? `$${n}::${type}[]` : `string_to_array($${n}::text, chr(31), chr(30))`;
  });
  return { params, args };
}

/**
 * Inserts rows into a table with an identity `id`, the ids taken from its sequence in row order
 * (as SQLite's rowids ascend in insertion order); returns them in row order.
 */
export async function insertWithIds(
  client: Queryable,
  table: string,
  columns: readonly Column[],
  rows: readonly (readonly unknown[])[],
): Promise<number[]> {
  const ids: number[] = [];
  for (const chunk of chunks(rows)) {
    const taken = await query<{ id: number }>(
      client,
      `select nextval(pg_get_serial_sequence($1, 'id')) as id from generate_series(1, $2)`,
      [table, chunk.length],
    );
    const chunkIds = taken.rows.map(({ id }) => id).sort((a, b) => a - b);
    const { params, args } = unnestArguments(columns, chunk, 2);
    await query(
      client,
      `insert into ${table} (id, ${columns.map((c) => c.name).join(', ')}) select * from unnest($1::bigint[], ${args.join(', ')})`,
      [chunkIds, ...params],
    );
    ids.push(...chunkIds);
  }
  return ids;
}

/** Inserts rows, one statement per chunk; `suffix` (an ON CONFLICT clause) is appended as is. */
export async function insertMany(
  client: Queryable,
  table: string,
  columns: readonly Column[],
  rows: readonly (readonly unknown[])[],
  suffix = '',
): Promise<void> {
  for (const chunk of chunks(rows)) {
    const { params, args } = unnestArguments(columns, chunk, 1);
    await query(
      client,
      `insert into ${table} (${columns.map((c) => c.name).join(', ')}) select * from unnest(${args.join(', ')}) ${suffix}`,
      params,
    );
  }
}
