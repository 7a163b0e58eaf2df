import type Database from 'better-sqlite3';
import { prepared } from '../prepared.js';
import type { RunRow } from '../schema.js';

/**
 * Every column of `runs` under its drizzle name, in the table's order: the rows read with it are the
 * ORM's `RunRow`s (test/db/run-rows.test.ts compares them), read without loading the ORM, which
 * `runs` would pay for at every call.
 */
const RUN_COLUMNS = `id, status, started_at as startedAt, finished_at as finishedAt, upstream,
  holder_pid as holderPid, holder_host as holderHost, holder_token as holderToken,
  heartbeat_at as heartbeatAt, pages, entries, page_size as pageSize, added, changed, removed,
  returned, unchanged, options_body_id as optionsBodyId, unknown_fields as unknownFields,
  error_code as errorCode, error_message as errorMessage, rebound_from as reboundFrom,
  "trigger", scheduled_for as scheduledFor`;

/** Runs newest first, as stored (a dead holder's run still reads `running`: see `runAsSeen`). */
export function runRows(sqlite: Database.Database, options: { limit: number; offset?: number }): RunRow[] {
  return prepared(sqlite, `select ${RUN_COLUMNS} from runs order by id desc limit ? offset ?`).all(
    options.limit,
    options.offset ?? 0,
  ) as RunRow[];
}

/** One run as stored, or undefined. */
export function runRow(sqlite: Database.Database, id: number): RunRow | undefined {
  return prepared(sqlite, `select ${RUN_COLUMNS} from runs where id = ?`).get(id) as RunRow | undefined;
}
