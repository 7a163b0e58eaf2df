import type { TransactionPort } from './sql-port.js';

/** The port the outbox's operations are written over (src/db/outbox-claim.ts and its neighbours). */
export interface OutboxPort extends TransactionPort {
  /**
   * Tells the delivery workers of every instance that the outbox changed outside a run (a lease
   * handed back, a redelivery, a target enabled again), so they look again at once. Called after
   * the change committed; a store whose workers only share a process has nothing to announce.
   */
  announce(): Promise<void>;
}

/**
 * A select list and the row it reads, written once: each field of `T` by the expression that reads
 * it, in the order of the select; `of` names the values of a row the port answers.
 */
export function selected<T>(fields: { [K in keyof T]-?: string }): {
  sql: string;
  of: (row: readonly unknown[]) => T;
} {
  const names = Object.keys(fields);
  return {
    sql: Object.values<string>(fields).join(', '),
    of: (row) => Object.fromEntries(names.map((name, i) => [name, row[i]])) as T,
  };
}
