import { sql, type SQL } from 'drizzle-orm';
import { runTimeSql } from './run-times.js';
import { changes, type ChangeKind, type ChangeRow } from './schema.js';

/**
 * An added, returned or removed change stores its whole entry once, in the version `version_id`
 * names, and null in the value column (migration body_once). These are the one definition of how a
 * read gets the value back: every query that returns change rows, on either dialect, selects them
 * from the change row (`c`) left-joined to that version (`v`), so nothing above src/db/ sees the
 * reference.
 */
export function oldValueSql(c: string, v: string): string {
  return `coalesce(${c}.old_value, case when ${c}.kind = 'removed' then ${v}.body end)`;
}

export function newValueSql(c: string, v: string): string {
  return `coalesce(${c}.new_value, case when ${c}.kind <> 'removed' then ${v}.body end)`;
}

/**
 * A change's time: its run's `finished_at`, stored once in `runs` (migration change_time_from_run),
 * a primary-key seek per row.
 */
export function changeTimeSql(c: string): string {
  return runTimeSql(`${c}.run_id`);
}

/**
 * The changes of the succeeded runs that finished in a time range, as a condition on `c.run_id`:
 * the runs are found on (status, finished_at), their changes on changes_run_idx. `bounds` are SQL
 * comparisons on `r.finished_at` with the dialect's placeholders.
 */
export function changesFinishedWithinSql(c: string, bounds: string): string {
  return `${c}.run_id in (select r.id from runs r where r.status = 'succeeded' and ${bounds})`;
}

/**
 * The first change at or after a time (`since`), or the last at or before it (`until`): runs commit
 * in order, so the first or last succeeded run on that side of the time (one seek on
 * runs_status_finished_idx), then its side's first or last change (one seek on changes_run_idx).
 */
export function changeIdBoundSql(side: 'since' | 'until', placeholder: string): string {
  const [cmp, dir] = side === 'since' ? ['>=', 'asc'] : ['<=', 'desc'];
  return `select c.id from changes c
    where c.run_id ${cmp} (select r.id from runs r where r.status = 'succeeded' and r.finished_at ${cmp} ${placeholder}
                           order by r.finished_at ${dir}, r.id ${dir} limit 1)
    order by c.run_id ${dir}, c.id ${dir} limit 1`;
}

/** The join that goes with the value expressions, the version aliased `v`. */
export const CHANGE_VERSION_JOIN = 'left join versions v on v.id = c.version_id';

/**
 * Raw SQL selecting change rows as `ChangeRow`, from `changes c`; append where/order on `c.`. The
 * aliases are quoted so that PostgreSQL keeps their case too (it folds bare names to lower case).
 */
export const CHANGE_ROWS_SQL = `select c.id, c.run_id as "runId", ${changeTimeSql('c')} as at, c.uuid, c.slot, c.kind, c.field,
        ${oldValueSql('c', 'v')} as "oldValue", ${newValueSql('c', 'v')} as "newValue"
   from changes c ${CHANGE_VERSION_JOIN}`;

// drizzle names a joined query's columns by table: "changes"."old_value", "versions"."body".
const [C, V] = ['"changes"', '"versions"'];

/**
 * drizzle's selection of `ChangeRow` from either dialect's `changes` table, for
 * `.from(changes).leftJoin(versions, …)`: the values resolved as the expressions above say.
 */
type ChangeKey = 'id' | 'runId' | 'uuid' | 'slot' | 'kind' | 'field';

export function changeRowSelectionOf<T extends Record<ChangeKey, unknown>>(
  table: T,
): Pick<T, ChangeKey> & { at: SQL<string>; oldValue: SQL<string | null>; newValue: SQL<string | null> } {
  return {
    id: table.id,
    runId: table.runId,
    at: sql<string>`${sql.raw(changeTimeSql(C))}`,
    uuid: table.uuid,
    slot: table.slot,
    kind: table.kind,
    field: table.field,
    oldValue: sql<string | null>`${sql.raw(oldValueSql(C, V))}`,
    newValue: sql<string | null>`${sql.raw(newValueSql(C, V))}`,
  };
}

/** SQLite's. */
export const changeRowSelection = changeRowSelectionOf(changes);

/**
 * Rows read `raw()` (arrays) with `changeRowSelection`, as `ChangeRow`s: drizzle selects its fields
 * in the selection's key order, the order written here (test/db/change-rows-of.test.ts holds both).
 */
export function changeRowsOf(rows: readonly unknown[][]): ChangeRow[] {
  const out = new Array<ChangeRow>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as [
      number,
      number,
      string,
      string,
      number,
      ChangeKind,
      string | null,
      string | null,
      string | null,
    ];
    out[i] = {
      id: r[0],
      runId: r[1],
      at: r[2],
      uuid: r[3],
      slot: r[4],
      kind: r[5],
      field: r[6],
      oldValue: r[7],
      newValue: r[8],
    };
  }
  return out;
}
