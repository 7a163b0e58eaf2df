/**
 * The few things SQL written once for both dialects needs of a connection (the run's stage, the
 * prune); placeholders are `?`. Each dialect has one implementation: src/db/sqlite/sql-port.ts,
 * src/db/postgres/sql-port.ts.
 */
/** A column of a multi-row insert, and its element type (PostgreSQL sends each column as one array). */
export interface InsertColumn {
  name: string;
  type: 'int' | 'bigint' | 'text';
}

export interface SqlPort {
  /** Which database answers: for the few statements that truly differ, branched inside their one operation. */
  readonly dialect: 'sqlite' | 'postgres';
  rows<T extends unknown[]>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** The first column of each row: a long list of ids or texts without an array per row. */
  values<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs one statement; how many rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * Inserts rows: a few statements of many rows each on PostgreSQL, one prepared statement run per
   * row on SQLite (in process, as fast). `onConflict` (an ON CONFLICT clause, which may name the
   * table) is appended as is; rows it would touch twice are the caller's to leave out.
   */
  insert(
    table: string,
    columns: readonly InsertColumn[],
    rows: readonly (readonly unknown[])[],
    onConflict?: string,
  ): Promise<void>;
  /** Inserts rows into a table with an integer `id`, the ids ascending in row order; answers them in row order. */
  insertWithIds(
    table: string,
    columns: readonly InsertColumn[],
    rows: readonly (readonly unknown[])[],
  ): Promise<number[]>;
  /** A subquery listing the values of one `?` parameter, and that parameter's value. */
  list(
    type: 'bigint' | 'int' | 'text',
    values: readonly (number | string)[],
  ): { sql: string; param: unknown };
  /**
   * A condition that `column` is one of `values` (one `?` parameter): an index seek per value on
   * both databases, where PostgreSQL may plan `in (list)` as a hash join over a scan of the table.
   */
  oneOf(
    column: string,
    type: 'bigint' | 'int' | 'text',
    values: readonly (number | string)[],
  ): { sql: string; param: unknown };
}

/**
 * A port that can also run one write transaction, for operations written once that must be atomic
 * (the outbox's claim): on SQLite the single writer's lock (BEGIN IMMEDIATE), on PostgreSQL one
 * pooled connection, whose rows the operation may lock itself (`dialect` says which it may).
 */
export interface TransactionPort extends SqlPort {
  /** `work` in one write transaction, handed the port of that transaction. */
  write<T>(work: (tx: SqlPort) => Promise<T>): Promise<T>;
}
