import { CHANGE_ROWS_SQL, changeRowsOf, changeTimeSql, newValueSql, oldValueSql } from './change-columns.js';
import { coworkerTimesSql } from './run-times.js';
import type { SqlPort } from './sql-port.js';
import type { ChangeRow, CoworkerRow, VersionRow } from './schema.js';
import type { CoworkerHistory } from './store.js';

// Coworkers and their versions, read once for both dialects over the port.

/** Every column of `versions`, in `VersionRow`'s order (the API serialises the rows as read). */
const VERSION_COLUMNS = 'id, uuid, slot, body, body_hash, valid_from_run, valid_to_run';
type VersionTuple = [number, string, number, string, string | null, number, number | null];

const versionRow = ([
  id,
  uuid,
  slot,
  body,
  bodyHash,
  validFromRun,
  validToRun,
]: VersionTuple): VersionRow => ({
  id,
  uuid,
  slot,
  body,
  bodyHash,
  validFromRun,
  validToRun,
});

/**
 * The current appearances of one coworker (empty when tombstoned), by slot. A sync never leaves two
 * current versions of one slot, but the order is total all the same: the id breaks a tie.
 */
export async function currentVersions(port: SqlPort, uuid: string): Promise<VersionRow[]> {
  const found = await port.rows<VersionTuple>(
    `select ${VERSION_COLUMNS} from versions where uuid = ? and valid_to_run is null order by slot, id`,
    [uuid],
  );
  return found.map(versionRow);
}

const TIMES = coworkerTimesSql('c');

/** Every field of `CoworkerRow` from `coworkers c`, in its order, the times from runs. */
const COWORKER_COLUMNS = `c.uuid, c.first_seen_run, ${TIMES.firstSeenAt}, c.removed_run, ${TIMES.removedAt},
  c.last_seen_run, ${TIMES.lastSeenAt}, c.returned_count, c.last_returned_run`;
type CoworkerTuple = [
  string,
  number,
  string,
  number | null,
  string | null,
  number,
  string | null,
  number,
  number | null,
];

const coworkerRow = ([
  uuid,
  firstSeenRun,
  firstSeenAt,
  removedRun,
  removedAt,
  lastSeenRun,
  lastSeenAt,
  returnedCount,
  lastReturnedRun,
]: CoworkerTuple): CoworkerRow => ({
  uuid,
  firstSeenRun,
  firstSeenAt,
  removedRun,
  removedAt,
  lastSeenRun,
  lastSeenAt,
  returnedCount,
  lastReturnedRun,
});

export async function getCoworker(port: SqlPort, uuid: string): Promise<CoworkerRow | undefined> {
  const [found] = await port.rows<CoworkerTuple>(
    `select ${COWORKER_COLUMNS} from coworkers c where c.uuid = ?`,
    [uuid],
  );
  return found && coworkerRow(found);
}

/** Coworkers in the order they were first seen, then by uuid. */
export async function listCoworkers(
  port: SqlPort,
  options: { limit: number; offset: number; includeRemoved: boolean },
): Promise<CoworkerRow[]> {
  const present = options.includeRemoved ? '' : 'where c.removed_run is null';
  const found = await port.rows<CoworkerTuple>(
    `select ${COWORKER_COLUMNS} from coworkers c ${present}
      order by c.first_seen_run, c.uuid limit ? offset ?`,
    [options.limit, options.offset],
  );
  return found.map(coworkerRow);
}

export async function countCoworkers(port: SqlPort, includeRemoved: boolean): Promise<number> {
  const [n] = await port.values<number>(
    includeRemoved
      ? 'select count(*) from coworkers'
      : 'select count(*) from coworkers where removed_run is null',
  );
  return n ?? 0;
}

/** Every field a change ever named, by name. */
export async function changedFields(port: SqlPort): Promise<string[]> {
  return port.values<string>('select distinct field from changes where field is not null order by field');
}

/** `json_build_object` arguments naming a table's columns as its row type's fields. */
const jsonFields = (alias: string, fields: Record<string, string>): string =>
  Object.entries(fields)
    .map(([field, column]) => `'${field}', ${column.includes('(') ? column : `${alias}.${column}`}`)
    .join(', ');

const COWORKER_JSON = jsonFields('c', {
  uuid: 'uuid',
  firstSeenRun: 'first_seen_run',
  firstSeenAt: TIMES.firstSeenAt,
  removedRun: 'removed_run',
  removedAt: TIMES.removedAt,
  lastSeenRun: 'last_seen_run',
  lastSeenAt: TIMES.lastSeenAt,
  returnedCount: 'returned_count',
  lastReturnedRun: 'last_returned_run',
});
const VERSION_JSON = jsonFields('v', {
  id: 'id',
  uuid: 'uuid',
  slot: 'slot',
  body: 'body',
  bodyHash: 'body_hash',
  validFromRun: 'valid_from_run',
  validToRun: 'valid_to_run',
});
const CHANGE_JSON = jsonFields('ch', {
  id: 'id',
  runId: 'run_id',
  at: changeTimeSql('ch'),
  uuid: 'uuid',
  slot: 'slot',
  kind: 'kind',
  field: 'field',
  oldValue: `(${oldValueSql('ch', 'v')})`,
  newValue: `(${newValueSql('ch', 'v')})`,
});

/** The order of a coworker's versions in its history, on either database (`versions v`). */
const VERSION_ORDER = 'v.valid_from_run, v.slot, v.id';

/**
 * PostgreSQL's: the coworker, its versions and its changes in one statement, one round trip, each
 * list aggregated as JSON: three planned queries cost several times the reads themselves
 * (bench/pg-history-queries.ts).
 */
const HISTORY_JSON_SQL = `select json_build_object(${COWORKER_JSON}),
    (select coalesce(json_agg(json_build_object(${VERSION_JSON}) order by ${VERSION_ORDER}), '[]')
       from versions v where v.uuid = c.uuid),
    (select coalesce(json_agg(json_build_object(${CHANGE_JSON}) order by ch.id), '[]')
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
    port.rows<VersionTuple>(
      `select ${VERSION_COLUMNS} from versions v where v.uuid = ? order by ${VERSION_ORDER}`,
      [uuid],
    ),
    port.rows<unknown[]>(`${CHANGE_ROWS_SQL} where c.uuid = ? order by c.id`, [uuid]),
  ]);
  return coworker && { coworker, versions: versions.map(versionRow), changes: changeRowsOf(changes) };
}
