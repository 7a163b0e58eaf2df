import { MirrorError } from '../errors.js';
import type { RunEnd, StageCommit } from './run-commit.js';
import type { SqlPort } from './sql-port.js';
import { storableText } from './storable-text.js';

// How a run ends, once for both dialects over the port, inside the transaction that ends it.

/** The run marked succeeded with its figures, its OPTIONS body kept or upserted. */
export async function markSucceeded(tx: SqlPort, input: StageCommit, entries: number): Promise<void> {
  // An OPTIONS request that failed this time keeps the body the upstream gave before.
  const optionsBodyId =
    input.optionsBody === null
      ? ((await tx.values<number>(PREVIOUS_OPTIONS_BODY))[0] ?? null)
      : await upsertOptionsBody(tx, input.optionsBody);
  const c = input.counts;
  await tx.run(
    `update runs set status = 'succeeded', finished_at = ?, pages = ?, entries = ?, page_size = ?,
            added = ?, changed = ?, removed = ?, returned = ?, unchanged = ?,
            options_body_id = ?, unknown_fields = ?
      where id = ?`,
    [
      input.finishedAt,
      input.pages,
      entries,
      input.pageSize,
      c.added,
      c.changed,
      c.removed,
      c.returned,
      c.unchanged,
      optionsBodyId,
      input.unknownFields.length > 0 ? JSON.stringify(input.unknownFields) : null,
      input.runId,
    ],
  );
}

const PREVIOUS_OPTIONS_BODY = `select options_body_id from runs where status = 'succeeded' and options_body_id is not null
  order by id desc limit 1`;

/**
 * The body's row, inserted when new. PostgreSQL's unique index is on md5(body) (a long body does
 * not fit a btree entry), so the lookup names it; SQLite's is on the text itself.
 */
const OPTIONS_BODY_ID = {
  sqlite: 'select id from options_bodies where body = ?',
  postgres: 'select id from options_bodies where md5(body) = md5(?::text) and body = ?',
} as const;

async function upsertOptionsBody(tx: SqlPort, body: string): Promise<number> {
  const params = tx.dialect === 'postgres' ? [body, body] : [body];
  const [existing] = await tx.values<number>(OPTIONS_BODY_ID[tx.dialect], params);
  if (existing !== undefined) return existing;
  const [id] = await tx.values<number>('insert into options_bodies (body) values (?) returning id', [body]);
  if (id === undefined) throw new Error('insert into options_bodies returned no id');
  return id;
}

/**
 * Throws RUN_ABORTED unless run `runId` is still running: its commit would otherwise store what
 * another process has already recorded as aborted. Inside the commit's write transaction; on
 * PostgreSQL the row is locked to its end, so nobody marks it aborted meanwhile.
 */
export async function assertStillRunning(tx: SqlPort, runId: number): Promise<void> {
  const lock = tx.dialect === 'postgres' ? ' for update' : '';
  const [status] = await tx.values<string>(`select status from runs where id = ?${lock}`, [runId]);
  if (status !== 'running') {
    throw new MirrorError(
      'RUN_ABORTED',
      `run ${runId} is no longer running (status ${status ?? 'missing'}); nothing stored`,
      { runId },
    );
  }
}

/**
 * A run's end without data, failed or aborted with its reason, unless it already ended; inside the
 * transaction that also writes the notifications the end calls for.
 */
export async function recordRunEnd(tx: SqlPort, end: RunEnd): Promise<void> {
  await tx.run(
    `update runs set status = ?, finished_at = ?, error_code = ?, error_message = ?, pages = ?, entries = ?
      where id = ? and status = 'running'`,
    [
      end.status,
      new Date().toISOString(),
      end.error.code,
      storableText(end.error.message),
      end.stats?.pages ?? null,
      end.stats?.entries ?? null,
      end.runId,
    ],
  );
}
