import { and, eq, gte, inArray, lt, lte, type Column, type SQL } from 'drizzle-orm';
import type { ChangeFilter } from './queries.js';

/** The columns of either dialect's `changes` table a filter reads. */
export interface ChangeFilterColumns {
  id: Column;
  uuid: Column;
  field: Column;
  kind: Column;
}

/** A filter's time bounds, turned into id bounds by the dialect's own seek (undefined: no change there). */
export interface ChangeIdBounds {
  first?: number | undefined;
  last?: number | undefined;
}

/**
 * The WHERE of a change filter, once for both dialects (drizzle's operators take either's columns),
 * or null when the filter can match nothing (a time bound past every change, an empty uuid list).
 */
export function changeFilterWhere(
  // `limit` is the caller's: the WHERE does not read it.
  filter: Omit<ChangeFilter, 'limit'>,
  columns: ChangeFilterColumns,
  bounds: ChangeIdBounds,
): SQL | undefined | null {
  const conditions: SQL[] = [];
  if (filter.since !== undefined) {
    if (bounds.first === undefined) return null;
    conditions.push(gte(columns.id, bounds.first));
  }
  if (filter.until !== undefined) {
    if (bounds.last === undefined) return null;
    conditions.push(lte(columns.id, bounds.last));
  }
  if (filter.uuid !== undefined) conditions.push(eq(columns.uuid, filter.uuid));
  if (filter.uuids !== undefined) {
    if (filter.uuids.length === 0) return null;
    conditions.push(inArray(columns.uuid, [...filter.uuids]));
  }
  if (filter.field !== undefined) conditions.push(eq(columns.field, filter.field));
  if (filter.kind !== undefined) {
    conditions.push(eq(columns.kind, filter.kind));
  }
  if (filter.beforeId !== undefined) conditions.push(lt(columns.id, filter.beforeId));
  return conditions.length > 0 ? and(...conditions) : undefined;
}
