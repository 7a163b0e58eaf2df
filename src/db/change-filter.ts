import type { ChangeFilter } from './store.js';
import type { SqlPort } from './sql-port.js';

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
): Promise<{ sql: string; params: unknown[] } | null> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, param: unknown) => {
    conditions.push(sql);
    params.push(param);
  };
  // A change's time grows with its id (runs commit in order), so a time bound is an id bound, found
  // with two seeks: the first (last) succeeded run at or after (before) the time on
  // runs_status_finished_idx, then its first (last) change on changes_run_idx. Filtering on time
  // while walking ids would scan every other change.
  for (const [side, cmp, dir] of [
    ['since', '>=', 'asc'],
    ['until', '<=', 'desc'],
  ] as const) {
    const at = filter[side];
    if (at === undefined) continue;
    const [id] = await port.values<number>(
      `select c.id from changes c
        where c.run_id ${cmp} (select r.id from runs r where r.status = 'succeeded' and r.finished_at ${cmp} ?
                               order by r.finished_at ${dir}, r.id ${dir} limit 1)
        order by c.run_id ${dir}, c.id ${dir} limit 1`,
      [at],
    );
    if (id === undefined) return null;
    add(`c.id ${cmp} ?`, id);
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
