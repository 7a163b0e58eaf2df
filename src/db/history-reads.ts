import { changeFieldsSql, CHANGE_ROWS_SQL, changeRowsOf } from './change-columns.js';
import { selected } from './port-shapes.js';
import { coworkerTimesSql } from './run-times.js';
import type { SqlPort } from './sql-port.js';
import type { ChangeRow, CoworkerRow, VersionRow } from './schema.js';
import type { CoworkerHistory } from './store.js';

// Coworkers and their versions, read once for both dialects over the port.

/** Every column of `versions v`. */
const VERSION = selected<VersionRow>({
  id: 'v.id',
  uuid: 'v.uuid',
  slot: 'v.slot',
  body: 'v.body',
  bodyHash: 'v.body_hash',
  validFromRun: 'v.valid_from_run',
  validToRun: 'v.valid_to_run',
});

/**
 * The current appearances of one coworker (empty when tombstoned), by slot. A sync never leaves two
 * current versions of one slot, but the order is total all the same: the id breaks a tie.
 */
export async function currentVersions(port: SqlPort, uuid: string): Promise<VersionRow[]> {
  const found = await port.rows(
    `select ${VERSION.sql} from versions v where v.uuid = ? and v.valid_to_run is null order by v.slot, v.id`,
    [uuid],
  );
  return found.map(VERSION.of);
}

const TIMES = coworkerTimesSql('c');

/** Every field of `CoworkerRow` from `coworkers c`, the times from runs. */
const COWORKER = selected<CoworkerRow>({
  uuid: 'c.uuid',
  firstSeenRun: 'c.first_seen_run',
  firstSeenAt: TIMES.firstSeenAt,
  removedRun: 'c.removed_run',
  removedAt: TIMES.removedAt,
  lastSeenRun: 'c.last_seen_run',
  lastSeenAt: TIMES.lastSeenAt,
  returnedCount: 'c.returned_count',
  lastReturnedRun: 'c.last_returned_run',
});

export async function getCoworker(port: SqlPort, uuid: string): Promise<CoworkerRow | undefined> {
  const [found] = await port.rows(`select ${COWORKER.sql} from coworkers c where c.uuid = ?`, [uuid]);
  return found && COWORKER.of(found);
}

const PRESENT = 'where c.removed_run is null';

/** Coworkers in the order they were first seen, then by uuid. */
export async function listCoworkers(
  port: SqlPort,
  options: { limit: number; offset: number; includeRemoved: boolean },
): Promise<CoworkerRow[]> {
  const found = await port.rows(
    `select ${COWORKER.sql} from coworkers c ${options.includeRemoved ? '' : PRESENT}
      order by c.first_seen_run, c.uuid limit ? offset ?`,
    [options.limit, options.offset],
  );
  return found.map(COWORKER.of);
}

export async function countCoworkers(port: SqlPort, includeRemoved: boolean): Promise<number> {
  const [n] = await port.values<number>(`select count(*) from coworkers c ${includeRemoved ? '' : PRESENT}`);
  return n ?? 0;
}

/** Every field a change ever named, by name. */
export async function changedFields(port: SqlPort): Promise<string[]> {
  return port.values<string>('select distinct field from changes where field is not null order by field');
}

/** `json_build_object` arguments naming each field's SQL by the field. */
const jsonFields = (fields: Record<string, string>): string =>
  Object.entries(fields)
    .map(([field, sql]) => `'${field}', ${sql}`)
    .join(', ');

/** The order of a coworker's versions in its history, on either database (`versions v`). */
const VERSION_ORDER = 'v.valid_from_run, v.slot, v.id';

/**
 * PostgreSQL's: the coworker, its versions and its changes in one statement, one round trip, each
 * list aggregated as JSON: three planned queries cost several times the reads themselves
 * (bench/pg-history-queries.ts).
 */
const HISTORY_JSON_SQL = `select json_build_object(${jsonFields(COWORKER.fields)}),
    (select coalesce(json_agg(json_build_object(${jsonFields(VERSION.fields)}) order by ${VERSION_ORDER}), '[]')
       from versions v where v.uuid = c.uuid),
    (select coalesce(json_agg(json_build_object(${jsonFields(changeFieldsSql('ch', 'v'))}) order by ch.id), '[]')
       from changes ch left join versions v on v.id = ch.version_id where ch.uuid = c.uuid)
   from coworkers c where c.uuid = ?`;

/**
 * Every version (oldest first) and every change (oldest first) of one coworker. SQLite answers
 * three prepared reads in microseconds; PostgreSQL's round trips are what cost, so it answers one.
 */
export async function coworkerHistory(port: SqlPort, uuid: string): Promise<CoworkerHistory | undefined> {
  if (port.dialect === 'postgres') {
    const [found] = await port.rows<[CoworkerRow, VersionRow[], ChangeRow[]]>(HISTORY_JSON_SQL, [uuid]);
    return found && { coworker: found[0], versions: found[1], changes: found[2] };
  }
  // Asked together: SQLite answers each as it is asked, so the three read one state of the file.
  const [coworker, versions, changes] = await Promise.all([
    getCoworker(port, uuid),
    port.rows(`select ${VERSION.sql} from versions v where v.uuid = ? order by ${VERSION_ORDER}`, [uuid]),
    port.rows(`${CHANGE_ROWS_SQL} where c.uuid = ? order by c.id`, [uuid]),
  ]);
  return coworker && { coworker, versions: versions.map(VERSION.of), changes: changeRowsOf(changes) };
}
