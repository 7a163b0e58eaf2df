import type { ChangeSubject } from './run-commit.js';
import type { ChangeFilter, ChangeStreamFilter, SubjectBatch } from './store.js';
import {
  CHANGE_COLUMNS,
  CHANGE_ROWS_SQL,
  CHANGE_VERSION_JOIN,
  changeFieldsSql,
  changeRowsOf,
  newValueSql,
  oldValueSql,
} from './change-columns.js';
import { changeFilterSql } from './change-filter.js';
import { keysetBatches, rowsEnds } from './change-batches.js';
import { entryOfChange } from './commit-plans.js';
import { asText, DIRECTORY_TEXT_CHARS, shownField } from './entry-fields.js';
import type { ChangeRow } from './schema.js';
import type { SqlPort } from './sql-port.js';

// The change feed, read once for both dialects over the port: newest first, each filter on its index.

/** The changes `filter` matches, newest first, at most `filter.limit`. */
export async function listChanges(port: SqlPort, filter: ChangeFilter): Promise<ChangeRow[]> {
  const where = await changeFilterSql(port, filter);
  if (where === null) return [];
  // Read as arrays: an export of 1,000,000 changes would otherwise pay for a keyed object per row.
  const found = await port.rows<unknown[]>(`${CHANGE_ROWS_SQL} ${where.sql} order by c.id desc limit ?`, [
    ...where.params,
    filter.limit,
  ]);
  return changeRowsOf(found);
}

/** `Store.changeIdAt`: the filter's own where, its index walked to `offset`, no row's values read. */
export async function changeIdAt(
  port: SqlPort,
  filter: ChangeStreamFilter,
  offset: number,
): Promise<number | null> {
  const where = await changeFilterSql(port, filter);
  if (where === null) return null;
  const [id] = await port.values<number>(
    `select c.id from changes c ${where.sql} order by c.id desc limit 1 offset ?`,
    [...where.params, offset],
  );
  return id ?? null;
}

/** `ChangeRow`'s fields, in its order. */
const CHANGE_FIELDS = Object.keys(changeFieldsSql('c', 'v'));

/** Each batch's subjects as the store's `changeSubjects` gives them. */
type Subjects = (rows: readonly ChangeRow[]) => Promise<Map<number, ChangeSubject>>;

/**
 * `Store.changesWithSubjects`, the CSV export's read. SQLite reads a batch and its subjects in one
 * statement (`withSubjects`); PostgreSQL reads them one after the other, its subjects read from the
 * entries in TypeScript (src/db/entry-fields.ts says why).
 */
export function changesWithSubjects(
  port: SqlPort,
  changeSubjects: Subjects,
  filter: ChangeStreamFilter,
  batchSize: number,
): AsyncGenerator<SubjectBatch, void, undefined> {
  const read = port.dialect === 'postgres' ? separately : withSubjects;
  return keysetBatches(
    (part) => read(port, changeSubjects, part),
    (batch) => rowsEnds(batch.rows),
    filter,
    batchSize,
  );
}

/** A batch of `listChanges`, then its subjects. */
async function separately(
  port: SqlPort,
  changeSubjects: Subjects,
  filter: ChangeFilter,
): Promise<SubjectBatch> {
  const rows = await listChanges(port, filter);
  return { rows, subjects: await changeSubjects(rows) };
}

/** The entry text of the version of `a.uuid`'s appearance `a.slot` valid at run `a.run_id`. */
const versionAtRunSql = (a: string) => `(select x.body from versions x
    where x.uuid = ${a}.uuid and x.slot = ${a}.slot and x.valid_from_run <= ${a}.run_id
    order by x.valid_from_run desc limit 1)`;

/**
 * The entry a change's subject is read from: the one an added/returned/removed change refers to,
 * else the version its run wrote for that appearance.
 */
const SUBJECT_BODY = `coalesce(
    case when c.kind = 'removed' then ${oldValueSql('c', 'v')}
         when c.kind in ('added', 'returned') then ${newValueSql('c', 'v')} end,
    ${versionAtRunSql('c')})`;

/**
 * SQLite's `listChanges` and subjects of its rows in one statement (the two apart read every change
 * twice). The outer `order by` keeps SQLite from flattening the filtered rows into it (they stay a
 * co-routine, already in that order: no sort), so each row's entry is picked once and its name and
 * post read from it, as `changeSubjects` reads them. Without asking `json_valid` first (the check was
 * a sixth of the statement, for entries the sync wrote as JSON): a value SQLite cannot read as JSON
 * fails the statement, and the batch is read `separately`, the careful way.
 */
async function withSubjects(
  port: SqlPort,
  changeSubjects: Subjects,
  filter: ChangeFilter,
): Promise<SubjectBatch> {
  const where = await changeFilterSql(port, filter);
  if (where === null) return { rows: [], subjects: new Map() };
  const cut = (key: string) => `substr(s.subject_body ->> '$.${key}', 1, ${DIRECTORY_TEXT_CHARS + 1})`;
  let found: unknown[][];
  try {
    found = await port.rows(
      `select ${CHANGE_FIELDS.map((field) => `s."${field}"`).join(', ')}, ${cut('name')}, ${cut('post')}
         from (select ${CHANGE_COLUMNS}, ${SUBJECT_BODY} as subject_body
                 from changes c ${CHANGE_VERSION_JOIN} ${where.sql}
                order by c.id desc limit ?) s
        order by s.id desc`,
      [...where.params, filter.limit],
    );
  } catch (error) {
    // Anything but JSON is a fault of the statement itself, not to be hidden by the slow path.
    if (!(error instanceof Error && /JSON/i.test(error.message))) throw error;
    return separately(port, changeSubjects, filter);
  }
  const subjects = new Map(found.map((r) => [r[0] as number, { name: asText(r[9]), post: asText(r[10]) }]));
  return { rows: changeRowsOf(found), subjects };
}

/**
 * For each change, the name and post of its coworker at its run: from the entry it stores (added,
 * returned, removed), else from the version its run left, read by the row's own values (a row not
 * stored as given is answered too). Read from the texts in TypeScript, as SQLite's `->>` reads them
 * (src/db/entry-fields.ts says why): an entry that is not a JSON object names no one.
 */
export async function changeSubjects(
  port: SqlPort,
  rows: readonly ChangeRow[],
): Promise<Map<number, ChangeSubject>> {
  return subjectsOf(rows, await versionBodies(port, rows));
}

/** The subjects of `rows`, over the version texts `versionBodies` read for them. */
export function subjectsOf(
  rows: readonly ChangeRow[],
  bodies: ReadonlyMap<number, string>,
): Map<number, ChangeSubject> {
  const out = new Map<number, ChangeSubject>();
  for (const row of rows) {
    const body = entryOfChange(row) ?? bodies.get(row.id) ?? null;
    out.set(row.id, { name: shownField(body, 'name'), post: shownField(body, 'post') });
  }
  return out;
}

/**
 * The entry text each field or media change's coworker had at its run (the version valid then), by
 * change id; the rows that store their entry are not asked. One statement for all of them.
 */
export async function versionBodies(port: SqlPort, rows: readonly ChangeRow[]): Promise<Map<number, string>> {
  const asked = rows.filter((row) => entryOfChange(row) === null);
  if (asked.length === 0) return new Map();
  // The asked rows as a table, one JSON parameter: [id, uuid, slot, run id] each.
  const table =
    port.dialect === 'postgres'
      ? `(select (e ->> 0)::bigint as id, e ->> 1 as uuid, (e ->> 2)::int as slot, (e ->> 3)::bigint as run_id
            from json_array_elements(?::json) e)`
      : `(select j.value ->> 0 as id, j.value ->> 1 as uuid, j.value ->> 2 as slot, j.value ->> 3 as run_id
            from json_each(?) j)`;
  const found = await port.rows<[number, string | null]>(
    `select a.id, ${versionAtRunSql('a')} from ${table} a`,
    [JSON.stringify(asked.map((row) => [row.id, row.uuid, row.slot, row.runId]))],
  );
  const out = new Map<number, string>();
  for (const [id, body] of found) if (body !== null) out.set(id, body);
  return out;
}
