import type { SqlPort } from './sql-port.js';
import type { RunRow } from './schema.js';

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
