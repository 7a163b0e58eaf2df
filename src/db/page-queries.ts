import type { ChangeSubject } from './change-batches.js';
import type { SqliteHandle } from './sqlite/handle.js';
import type { ChangeRow } from './schema.js';
import { asText, DIRECTORY_TEXT_CHARS } from './entry-fields.js';
import { jsonField } from './json-field.js';
import { CHANGE_VERSION_JOIN } from './change-columns.js';
import { isJsonError, subjectBodySql } from './change-reads.js';
import { prepared } from './prepared.js';

/**
 * Named reads for the people-facing pages (src/web/). Kept apart from queries.ts, which the API and
 * the CLI share: these reads exist for what a page shows (names beside changes, one page of a past
 * listing, a directory to search), each bounded so a page stays well under 100 ms at 10,000
 * coworkers and 1,000,000 changes.
 */

/** The name and post of an entry's text, cut one character past what a page keeps. */
const SUBJECT_FIELDS = (body: string) =>
  `substr(${jsonField(body, '$.name')}, 1, ${DIRECTORY_TEXT_CHARS + 1}),
   substr(${jsonField(body, '$.post')}, 1, ${DIRECTORY_TEXT_CHARS + 1})`;

/**
 * The subjects of stored changes by id, in one statement for a whole batch (a CSV export of
 * 1,000,000 changes made two queries per row).
 */
const SUBJECTS_BY_ID_SQL = `with picked as (
    select c.id, ${subjectBodySql('c', 'v')} as body
      from json_each(?) j join changes c on c.id = j.value ${CHANGE_VERSION_JOIN})
  select id, ${SUBJECT_FIELDS('body')} from picked`;

/**
 * For each change, the name of its coworker at that run: read from the stored entry of an
 * added/returned/removed change, from the version the run wrote for a field or media change. One
 * statement for the rows as stored; a row it cannot answer (not stored as given) is read alone. The
 * name is cut to DIRECTORY_TEXT_CHARS so a 1 MB name costs nothing here.
 */
export function changeSubjects(store: SqliteHandle, rows: readonly ChangeRow[]): Map<number, ChangeSubject> {
  const out = new Map<number, ChangeSubject>();
  if (rows.length === 0) return out;
  try {
    const found = prepared(store.sqlite, SUBJECTS_BY_ID_SQL)
      .raw(true)
      .all(JSON.stringify(rows.map((row) => row.id))) as [number, unknown, unknown][];
    for (const [id, name, post] of found) out.set(id, { name: asText(name), post: asText(post) });
  } catch (error) {
    // One stored value SQLite cannot read as JSON fails the batch: each row is then read alone.
    // Any other fault is the statement's own, not to be hidden behind the slow path.
    if (!isJsonError(error)) throw error;
    out.clear();
  }
  for (const row of rows) if (!out.has(row.id)) out.set(row.id, subjectAlone(store, row));
  return out;
}

/** One change's subject from its own values: what the batch gives a row as stored. */
function subjectAlone(store: SqliteHandle, row: ChangeRow): ChangeSubject {
  const version = prepared(
    store.sqlite,
    `select ${SUBJECT_FIELDS('body')}
       from versions where uuid = ? and slot = ? and valid_from_run <= ?
      order by valid_from_run desc limit 1`,
  );
  const entry = prepared(
    store.sqlite,
    `with entry(body) as (select ?) select ${SUBJECT_FIELDS('body')} from entry`,
  );
  // Only these changes store a whole entry; a field or media change stores a value, and its
  // coworker's name is in the version its run wrote.
  const body =
    row.kind === 'removed'
      ? row.oldValue
      : row.kind === 'added' || row.kind === 'returned'
        ? row.newValue
        : null;
  let found: unknown[] | undefined;
  try {
    found =
      body !== null
        ? (entry.raw(true).get(body) as unknown[] | undefined)
        : (version.raw(true).get(row.uuid, row.slot, row.runId) as unknown[] | undefined);
  } catch {
    // A stored value that is not a JSON object has no name: the page shows the uuid instead.
    found = undefined;
  }
  return { name: asText(found?.[0]), post: asText(found?.[1]) };
}
