import { selected } from './port-shapes.js';
import type { SqlPort } from './sql-port.js';
import { runStatuses } from './enums.js';
import type { RunRow } from './schema.js';

type RunStatus = RunRow['status'];

// Runs read once for both dialects over the port; the operations' contracts are the Store's (store.ts).

/** Each field of `RunRow` by its column, in the table's order (the API serialises rows as read). */
const RUN = selected<RunRow>({
  id: 'id',
  status: 'status',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
  upstream: 'upstream',
  holderPid: 'holder_pid',
  holderHost: 'holder_host',
  holderToken: 'holder_token',
  heartbeatAt: 'heartbeat_at',
  pages: 'pages',
  entries: 'entries',
  pageSize: 'page_size',
  added: 'added',
  changed: 'changed',
  removed: 'removed',
  returned: 'returned',
  unchanged: 'unchanged',
  optionsBodyId: 'options_body_id',
  unknownFields: 'unknown_fields',
  errorCode: 'error_code',
  errorMessage: 'error_message',
  reboundFrom: 'rebound_from',
  trigger: '"trigger"',
  scheduledFor: 'scheduled_for',
});

/** Every column of `runs`, as `runRowOf` reads them. */
export const RUN_COLUMNS = RUN.sql;

/** A row of RUN_COLUMNS as `RunRow`. */
export const runRowOf: (tuple: readonly unknown[]) => RunRow = RUN.of;

/** One run of `sql` (selecting RUN_COLUMNS), or undefined. */
export async function oneRun(
  port: SqlPort,
  sql: string,
  params: readonly unknown[],
): Promise<RunRow | undefined> {
  const [found] = await port.rows(sql, params);
  return found && runRowOf(found);
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

export function latestSucceededRun(port: SqlPort, asOf?: string): Promise<RunRow | undefined> {
  return oneRun(port, latestSucceededSql(RUN_COLUMNS, asOf !== undefined), asOf === undefined ? [] : [asOf]);
}

export async function latestSucceededRunId(port: SqlPort): Promise<number | null> {
  const [id] = await port.values<number>(latestSucceededSql('id', false));
  return id ?? null;
}

/** Runs newest first, as stored (a dead holder's run still reads `running`: each store says how it is seen). */
export async function runRows(port: SqlPort, options: { limit: number; offset?: number }): Promise<RunRow[]> {
  const newestFirst = `select ${RUN_COLUMNS} from runs order by id desc limit ? offset ?`;
  return (await port.rows(newestFirst, [options.limit, options.offset ?? 0])).map(runRowOf);
}

export function runById(port: SqlPort, id: number): Promise<RunRow | undefined> {
  return oneRun(port, `select ${RUN_COLUMNS} from runs where id = ?`, [id]);
}

export function previousRun(port: SqlPort, runId: number): Promise<RunRow | undefined> {
  return oneRun(port, `select ${RUN_COLUMNS} from runs where id < ? order by id desc limit 1`, [runId]);
}

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
