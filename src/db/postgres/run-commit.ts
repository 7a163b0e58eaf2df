import { MirrorError } from '../../errors.js';
import type { RemovedAppearance, RunEnd } from '../run-commit.js';
import type { StageCommit } from '../run-stage.js';
import { insertWithIds } from './bulk.js';
import type { PgContext } from './context.js';
import { writeOutbox, type RunMemory } from './outbox.js';
import { one, run, transaction, tuples, type Tx } from './sql.js';

// A run's end on PostgreSQL, ONE transaction, and what its stage's commit (stage.ts) asks of the
// database's own tables: the twin of src/db/sqlite/run-commit.ts, writing the same rows.

/**
 * Each uuid's slots one index seek each (the next slot after the last, on versions_slot_idx), then
 * each slot's newest version by one more: what it costs does not grow with the versions a slot
 * has had, which a run that changes every entry adds to each time.
 */
export const REMOVED_APPEARANCES = `
  with recursive slots(uuid, slot) as (
    select u.uuid, (select min(w.slot) from versions w where w.uuid = u.uuid)
      from unnest($1::text[]) as u(uuid)
    union all
    select s.uuid, (select min(w.slot) from versions w where w.uuid = s.uuid and w.slot > s.slot)
      from slots s where s.slot is not null
  )
  select v.id, v.uuid, v.slot, v.body_hash, v.body
    from slots s
    cross join lateral (
      select w.id, w.uuid, w.slot, w.body_hash, w.body, w.valid_to_run from versions w
       where w.uuid = s.uuid and w.slot = s.slot order by w.id desc limit 1
    ) v
   where s.slot is not null and v.valid_to_run is not null
   order by v.uuid, v.slot`;

/**
 * The removed appearances of these uuids: each slot whose newest version is closed left the
 * listing and has not come back.
 */
export async function removedAppearances(
  ctx: PgContext,
  uuids: readonly string[],
  hashOf: (body: string) => string,
): Promise<RemovedAppearance[]> {
  if (uuids.length === 0) return [];
  const found = await tuples<[number, string, number, string | null, string]>(ctx.pool, REMOVED_APPEARANCES, [
    [...new Set(uuids)],
  ]);
  const byUuid = new Map<string, RemovedAppearance[]>();
  for (const [versionId, uuid, slot, hash, body] of found) {
    const list = byUuid.get(uuid) ?? [];
    list.push({ versionId, uuid, slot, hash: hash ?? hashOf(body), body });
    byUuid.set(uuid, list);
  }
  return uuids.flatMap((uuid) => byUuid.get(uuid) ?? []);
}

export async function lockRunningRow(tx: Pick<Tx, 'client'>, runId: number): Promise<void> {
  const row = await one<{ status: string }>(tx.client, 'select status from runs where id = $1 for update', [
    runId,
  ]);
  if (row?.status !== 'running') {
    throw new MirrorError(
      'RUN_ABORTED',
      `run ${runId} is no longer running (status ${row?.status ?? 'missing'}); nothing stored`,
      { runId },
    );
  }
}

/** The run marked succeeded with its figures, its OPTIONS body kept or upserted. */
export async function markSucceeded(tx: Tx, input: StageCommit, entries: number): Promise<void> {
  // An OPTIONS request that failed this time keeps the body the upstream gave before.
  const optionsBodyId =
    input.optionsBody === null
      ? await previousOptionsBodyId(tx)
      : await upsertOptionsBody(tx, input.optionsBody);
  const c = input.counts;
  await run(
    tx.client,
    `update runs set status = 'succeeded', finished_at = $2, pages = $3, entries = $4, page_size = $5,
            added = $6, changed = $7, removed = $8, returned = $9, unchanged = $10,
            options_body_id = $11, unknown_fields = $12
      where id = $1`,
    [
      input.runId,
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
    ],
  );
}

async function previousOptionsBodyId(tx: Tx): Promise<number | null> {
  const row = await one<{ id: number }>(
    tx.client,
    `select options_body_id as id from runs where status = 'succeeded' and options_body_id is not null
      order by id desc limit 1`,
  );
  return row?.id ?? null;
}

async function upsertOptionsBody(tx: Tx, body: string): Promise<number> {
  // md5(body) is what the unique index holds (a long body does not fit a btree entry).
  const existing = await one<{ id: number }>(
    tx.client,
    'select id from options_bodies where md5(body) = md5($1) and body = $1',
    [body],
  );
  if (existing) return existing.id;
  const [id] = await insertWithIds(tx.client, 'options_bodies', [{ name: 'body', type: 'text' }], [[body]]);
  return id ?? 0;
}

/** Records a run's end without data, and the notification it calls for, in one transaction. */
export async function endRun(ctx: PgContext, end: RunEnd): Promise<void> {
  await transaction(ctx.pool, async (tx) => {
    await run(
      tx.client,
      `update runs set status = $2, finished_at = $3, error_code = $4, error_message = $5, pages = $6, entries = $7
        where id = $1 and status = 'running'`,
      [
        end.runId,
        end.status,
        new Date().toISOString(),
        end.error.code,
        end.error.message,
        end.stats?.pages ?? null,
        end.stats?.entries ?? null,
      ],
    );
    const memory: RunMemory = { changes: [], bodies: new Map() };
    if (end.outbox) await writeOutbox(tx, end.runId, end.outbox, memory);
    if (end.notify) await writeOutbox(tx, end.runId, end.notify, memory);
  });
}
