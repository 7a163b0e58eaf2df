import { changeIdBoundSql } from './change-columns.js';
import type { ChangeKind } from './schema.js';
import type { SqlPort } from './sql-port.js';

/** A read of the change feed: its filters, newest first, at most `limit`. */
export interface ChangeFilter {
  since?: string;
  until?: string;
  uuid?: string | undefined;
  /** Only these coworkers (the timeline's name filter); an empty list matches nothing. */
  uuids?: readonly string[] | undefined;
  field?: string | undefined;
  kind?: ChangeKind | undefined;
  limit: number;
  /** Keyset pagination: only changes with an id below this. */
  beforeId?: number | undefined;
}

/** A condition in SQL with its `?` parameters, in order. */
export interface SqlCondition {
  sql: string;
  params: unknown[];
}

/**
 * The first change at or after a time (`since`) or the last at or before it (`until`): a change's
 * time grows with its id (runs commit in order), so a time bound is an id bound found with two
 * seeks; filtering on time while walking ids newest-first would scan every other change.
 */
async function changeIdBound(
  port: SqlPort,
  side: 'since' | 'until',
  at: string,
): Promise<number | undefined> {
  const [id] = await port.values<number>(changeIdBoundSql(side, '?'), [at]);
  return id;
}

/**
 * The WHERE of a change filter on `changes c`, once for both dialects, each condition one its index
 * serves (changes_kind_idx, changes_field_idx, changes_uuid_idx, the primary key): `where` and its
 * parameters, `where` empty when nothing filters; null when the filter can match nothing (a time
 * bound past every change, an empty uuid list).
 */
export async function changeFilterSql(
  port: SqlPort,
  // `limit` is the caller's: the WHERE does not read it.
  filter: Omit<ChangeFilter, 'limit'>,
): Promise<SqlCondition | null> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, param: unknown) => {
    conditions.push(sql);
    params.push(param);
  };
  if (filter.since !== undefined) {
    const first = await changeIdBound(port, 'since', filter.since);
    if (first === undefined) return null;
    add('c.id >= ?', first);
  }
  if (filter.until !== undefined) {
    const last = await changeIdBound(port, 'until', filter.until);
    if (last === undefined) return null;
    add('c.id <= ?', last);
  }
  if (filter.uuid !== undefined) add('c.uuid = ?', filter.uuid);
  if (filter.uuids !== undefined) {
    if (filter.uuids.length === 0) return null;
    const { sql, param } = port.oneOf('c.uuid', 'text', filter.uuids);
    add(sql, param);
  }
  if (filter.field !== undefined) add('c.field = ?', filter.field);
  if (filter.kind !== undefined) add('c.kind = ?', filter.kind);
  if (filter.beforeId !== undefined) add('c.id < ?', filter.beforeId);
  return { sql: conditions.length > 0 ? `where ${conditions.join(' and ')}` : '', params };
}
