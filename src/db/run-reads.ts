import type { SqlPort } from './sql-port.js';
import { runStatuses } from './enums.js';
import type { RunRow } from './schema.js';

type RunStatus = RunRow['status'];

// Runs read once for both dialects over the port.

/** Each field of `RunRow` and its column, in the table's order (the API serialises rows as read). */
const RUN_FIELDS = [
  ['id', 'id'],
  ['status', 'status'],
  ['startedAt', 'started_at'],
  ['finishedAt', 'finished_at'],
  ['upstream', 'upstream'],
  ['holderPid', 'holder_pid'],
  ['holderHost', 'holder_host'],
  ['holderToken', 'holder_token'],
  ['heartbeatAt', 'heartbeat_at'],
  ['pages', 'pages'],
  ['entries', 'entries'],
  ['pageSize', 'page_size'],
  ['added', 'added'],
  ['changed', 'changed'],
  ['removed', 'removed'],
  ['returned', 'returned'],
  ['unchanged', 'unchanged'],
  ['optionsBodyId', 'options_body_id'],
  ['unknownFields', 'unknown_fields'],
  ['errorCode', 'error_code'],
  ['errorMessage', 'error_message'],
  ['reboundFrom', 'rebound_from'],
  ['trigger', '"trigger"'],
  ['scheduledFor', 'scheduled_for'],
] as const satisfies readonly (readonly [keyof RunRow, string])[];

/** Every column of `runs`, as `runRowOf` reads them. */
export const RUN_COLUMNS = RUN_FIELDS.map(([, column]) => column).join(', ');

/** A row of RUN_COLUMNS as `RunRow`. */
export function runRowOf(tuple: readonly unknown[]): RunRow {
  const row: Record<string, unknown> = {};
  RUN_FIELDS.forEach(([field], i) => (row[field] = tuple[i]));
  return row as RunRow;
}

/**
 * The one definition of "the latest successful run": the newest finish, the newest id among equal
 * finishes, read off runs_status_finished_idx; `asOf` adds a `?` bound on the finish (an ISO time).
 */
export function latestSucceededSql(columns: string, asOf: boolean): string {
  const bound = asOf ? ' and finished_at <= ?' : '';
  return `select ${columns} from runs where status = 'succeeded'${bound}
   order by finished_at desc, id desc limit 1`;
}

/** The latest successful run, or the latest one finished at or before `asOf` (an ISO time). */
export async function latestSucceededRun(port: SqlPort, asOf?: string): Promise<RunRow | undefined> {
  const [found] = await port.rows(
    latestSucceededSql(RUN_COLUMNS, asOf !== undefined),
    asOf === undefined ? [] : [asOf],
  );
  return found && runRowOf(found);
}

/** Cheap change detector for readers in other processes: the id of the newest finished successful run. */
export async function latestSucceededRunId(port: SqlPort): Promise<number | null> {
  const [id] = await port.values<number>(latestSucceededSql('id', false));
  return id ?? null;
}

/** Runs newest first, as stored (a dead holder's run still reads `running`: each store says how it is seen). */
export async function runRows(port: SqlPort, options: { limit: number; offset?: number }): Promise<RunRow[]> {
  const found = await port.rows(`select ${RUN_COLUMNS} from runs order by id desc limit ? offset ?`, [
    options.limit,
    options.offset ?? 0,
  ]);
  return found.map(runRowOf);
}

/** One run as stored, or undefined. */
export async function runById(port: SqlPort, id: number): Promise<RunRow | undefined> {
  const [found] = await port.rows(`select ${RUN_COLUMNS} from runs where id = ?`, [id]);
  return found && runRowOf(found);
}

/** The run recorded just before run `runId`, whatever its status. */
export async function previousRun(port: SqlPort, runId: number): Promise<RunRow | undefined> {
  const [found] = await port.rows(`select ${RUN_COLUMNS} from runs where id < ? order by id desc limit 1`, [
    runId,
  ]);
  return found && runRowOf(found);
}

/** When the newest run started, whatever started it; null when none was ever recorded. */
export async function latestRunStart(port: SqlPort): Promise<string | null> {
  const [at] = await port.values<string | null>('select max(started_at) from runs');
  return at ?? null;
}

export async function countRuns(port: SqlPort): Promise<number> {
  const [n] = await port.values<number>('select count(*) from runs');
  return n ?? 0;
}

/** How many runs are recorded in each status (every status present, 0 when none). */
export async function runCounts(port: SqlPort): Promise<Map<RunStatus, number>> {
  const counted = await port.rows<[RunStatus, number]>('select status, count(*) from runs group by status');
  const counts = new Map(counted);
  return new Map(runStatuses.map((status) => [status, counts.get(status) ?? 0]));
}

/** Succeeded runs for the team page's run picker, newest first. */
export async function succeededRunTimes(
  port: SqlPort,
  limit: number,
): Promise<{ id: number; finishedAt: string; entries: number | null }[]> {
  const found = await port.rows<[number, string, number | null]>(
    `select id, finished_at, entries from runs
      where status = 'succeeded' and finished_at is not null order by id desc limit ?`,
    [limit],
  );
  return found.map(([id, finishedAt, entries]) => ({ id, finishedAt, entries }));
}

/** The finish times of the given runs (a run not finished: its start), in the order asked. */
export async function runFinishTimes(port: SqlPort, ids: readonly number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const among = port.oneOf('id', 'bigint', unique);
  const byId = new Map(
    await port.rows<[number, string]>(
      `select id, coalesce(finished_at, started_at) from runs where ${among.sql}`,
      [among.param],
    ),
  );
  const out = new Map<number, string>();
  for (const id of unique) {
    const at = byId.get(id);
    if (at !== undefined) out.set(id, at);
  }
  return out;
}
