import type Database from 'better-sqlite3';

/**
 * Statements kept per connection: a page's reads were prepared again on every request (most of the
 * CPU of `/` and `/changes/`). Keyed by the SQL text, so only SQL built from constants should
 * come here; a query whose text varies with its input (an `in (?, ?, …)` list) stays bounded by
 * MAX_STATEMENTS, the oldest dropped first.
 * A cached statement keeps the mode its caller last set (`raw()`, `pluck()`): every caller of a given
 * text sets the mode it reads with, as the callers in this folder do.
 */
const MAX_STATEMENTS = 256;

const byConnection = new WeakMap<Database.Database, Map<string, Database.Statement>>();

export function prepared(sqlite: Database.Database, sql: string): Database.Statement {
  let statements = byConnection.get(sqlite);
  if (!statements) byConnection.set(sqlite, (statements = new Map<string, Database.Statement>()));
  let statement = statements.get(sql);
  if (!statement) {
    statement = sqlite.prepare(sql);
    // A Map iterates in insertion order: its first key is the oldest.
    if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value as string);
    statements.set(sql, statement);
  }
  return statement;
}
