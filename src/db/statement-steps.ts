import type { SqlPort } from './sql-port.js';

// An operation written once for both dialects that SQLite must also run synchronously (as a store
// opens, which is synchronous): a generator of statements, answered at once on a SQLite connection
// (`answeredNow`) or awaited over the port (`answeredOver`).

/** A statement (`?` placeholders): its rows as arrays, or (`run`) how many rows it changed. */
export interface Statement {
  kind: 'rows' | 'run';
  sql: string;
  params: unknown[];
}

export type Steps<T> = Generator<Statement, T, unknown>;

/** One statement's answer, typed as its caller reads it. */
export function* ask<T>(kind: Statement['kind'], sql: string, params: unknown[] = []): Steps<T> {
  return (yield { kind, sql, params }) as T;
}

/** The steps run to their end, each statement answered at once. */
export function answeredNow<T>(steps: Steps<T>, answer: (statement: Statement) => unknown): T {
  let step = steps.next();
  while (step.done !== true) step = steps.next(answer(step.value));
  return step.value;
}

/** The steps run to their end over the port. */
export async function answeredOver<T>(port: SqlPort, steps: Steps<T>): Promise<T> {
  let step = steps.next();
  while (step.done !== true) {
    const { kind, sql, params } = step.value;
    step = steps.next(kind === 'rows' ? await port.rows(sql, params) : await port.run(sql, params));
  }
  return step.value;
}
