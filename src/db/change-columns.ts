import { runTimeSql } from './run-times.js';
import type { ChangeRow } from './schema.js';

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

/** Each field of `ChangeRow`, in its order, as SQL over the change row `c` and its version `v`. */
export function changeFieldsSql(c: string, v: string): Record<keyof ChangeRow, string> {
  return {
    id: `${c}.id`,
    runId: `${c}.run_id`,
    at: runTimeSql(`${c}.run_id`),
    uuid: `${c}.uuid`,
    slot: `${c}.slot`,
    kind: `${c}.kind`,
    field: `${c}.field`,
    oldValue: oldValueSql(c, v),
    newValue: newValueSql(c, v),
  };
}

/**
 * The changes of the succeeded runs that finished in a time range, as a condition on `c.run_id`:
 * the runs are found on (status, finished_at), their changes on changes_run_idx. `bounds` are SQL
 * comparisons on `r.finished_at` with the dialect's placeholders.
 */
export function changesFinishedWithinSql(c: string, bounds: string): string {
  return `${c}.run_id in (select r.id from runs r where r.status = 'succeeded' and ${bounds})`;
}

/** The join that goes with the value expressions, the version aliased `v`. */
export const CHANGE_VERSION_JOIN = 'left join versions v on v.id = c.version_id';

/**
 * `ChangeRow`'s fields from `changes c` and its version, each named as its field: quoted, so that
 * PostgreSQL keeps their case too (it folds bare names to lower case).
 */
export const CHANGE_COLUMNS = Object.entries(changeFieldsSql('c', 'v'))
  .map(([field, sql]) => `${sql} as "${field}"`)
  .join(', ');

/** Raw SQL selecting change rows as `ChangeRow`, from `changes c`; append where/order on `c.`. */
export const CHANGE_ROWS_SQL = `select ${CHANGE_COLUMNS} from changes c ${CHANGE_VERSION_JOIN}`;

/** Rows of `CHANGE_ROWS_SQL` read as arrays, as `ChangeRow`s. */
export function changeRowsOf(rows: readonly unknown[][]): ChangeRow[] {
  return rows.map(
    (r) =>
      ({
        id: r[0],
        runId: r[1],
        at: r[2],
        uuid: r[3],
        slot: r[4],
        kind: r[5],
        field: r[6],
        oldValue: r[7],
        newValue: r[8],
      }) as ChangeRow,
  );
}
