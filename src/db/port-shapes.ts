import type { InsertColumn, SqlPort } from './sql-port.js';

// Statement shapes that SQL written once over the port repeats: a table's column list, and a walk
// of a large table in key order.

const TYPES = { int: 'int', integer: 'int', bigint: 'bigint', text: 'text' } as const;

/** The columns of a definition (`name type …, …`, as CREATE TABLE lists them) as `SqlPort.insert` takes them. */
export function columns(definition: string): InsertColumn[] {
  return definition.split(',').map((column) => {
    const [name = '', type = ''] = column.trim().split(/\s+/);
    if (!(type in TYPES)) throw new Error(`column ${name}: no insert type for ${type}`);
    return { name, type: TYPES[type as keyof typeof TYPES] };
  });
}

/**
 * The rows of `sql` (its last `?` the key the walk is past, ordered by that key, the first column),
 * read `batch` at a time: a statement per batch, never the whole table in memory at once.
 */
export async function* walk<T extends [number, ...unknown[]]>(
  port: Pick<SqlPort, 'rows'>,
  sql: string,
  params: readonly unknown[],
  batch: number,
): AsyncGenerator<T> {
  for (let after = -1; ;) {
    const rows = await port.rows<T>(`${sql} limit ${batch}`, [...params, after]);
    yield* rows;
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < batch) return;
    after = last[0];
  }
}

/**
 * A select list and the row it reads, written once: each field of `T` by the expression that reads
 * it, in the order of the select; `of` names the values of a row the port answers.
 */
export function selected<T>(fields: { [K in keyof T]-?: string }): {
  fields: { [K in keyof T]-?: string };
  sql: string;
  of: (row: readonly unknown[]) => T;
} {
  const names = Object.keys(fields);
  return {
    fields,
    sql: Object.values<string>(fields).join(', '),
    of: (row) => Object.fromEntries(names.map((name, i) => [name, row[i]])) as T,
  };
}
