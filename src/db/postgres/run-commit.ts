import { MirrorError } from '../../errors.js';
import { changeVersionRefs, listingWrites, type BodyHolder } from '../commit-plans.js';
import type { CurrentListing, RemovedAppearance, RunCommit, RunEnd } from '../run-commit.js';
import type { StageCommit } from '../run-stage.js';
import { insertMany, insertWithIds, setWhereIds } from './bulk.js';
import type { PgContext } from './context.js';
import { insertChanges } from './change-rows.js';
import { writeMediaRows } from './media-commit.js';
import { writeOutbox, type RunMemory } from './outbox.js';
import { announceCommit } from './commit-watch.js';
import { assertHeld, latestSucceededRun } from './runs.js';
import { one, run, transaction, tuples, type Tx } from './sql.js';

// A run's commit and end on PostgreSQL, each ONE transaction: the twin of src/db/sqlite/run-commit.ts,
// writing the same rows with the same ids in the same order, in multi-row statements.

export async function currentListing(
  ctx: PgContext,
  hashOf: (body: string) => string,
): Promise<CurrentListing> {
  const [listed, known] = await Promise.all([
    tuples<[number, number, string, number, string | null, string | null]>(
      ctx.pool,
      `select lp.id, v.id, v.uuid, v.slot, v.body_hash, case when v.body_hash is null then v.body end
         from listing_positions lp join versions v on v.id = lp.version_id
        where lp.valid_to_run is null
        order by lp.position`,
    ),
    tuples<[string, boolean]>(ctx.pool, 'select uuid, removed_run is not null from coworkers order by uuid'),
  ]);
  const appearances: CurrentListing['appearances'] = [];
  const positions: CurrentListing['positions'] = [];
  for (const [positionId, versionId, uuid, slot, hash, body] of listed) {
    appearances.push({ versionId, uuid, slot, hash: hash ?? hashOf(body ?? '') });
    positions.push({ id: positionId, versionId });
  }
  return { appearances, positions, known: new Map(known) };
}

export async function removedAppearances(
  ctx: PgContext,
  uuids: readonly string[],
  hashOf: (body: string) => string,
): Promise<RemovedAppearance[]> {
  if (uuids.length === 0) return [];
  const found = await tuples<[number, string, number, string | null, string]>(
    ctx.pool,
    `select v.id, v.uuid, v.slot, v.body_hash, v.body
       from versions v
      where v.uuid = any($1::text[]) and v.valid_to_run is not null
        and v.id = (select max(w.id) from versions w where w.uuid = v.uuid and w.slot = v.slot)
      order by v.uuid, v.slot`,
    [[...new Set(uuids)]],
  );
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

/**
 * Writes a run's outcome in one transaction: the listing, the media rows it references and the
 * notifications it calls for appear entirely or not at all.
 */
export async function commitRun(ctx: PgContext, input: RunCommit): Promise<void> {
  assertHeld(ctx, input.runId);
  await transaction(ctx.pool, async (tx) => {
    await lockRunningRow(tx, input.runId);
    await writeCoworkers(tx, input);
    const memory: RunMemory = { changes: [], bodies: new Map() };
    const versionIds = await writeVersions(tx, input, memory);
    const writes = listingWrites(input.positions, versionIds);
    await setWhereIds(tx.client, 'listing_positions', 'valid_to_run', input.runId, writes.close);
    await insertWithIds(
      tx.client,
      'listing_positions',
      LISTING_COLUMNS,
      writes.open.map((w) => [...w, input.runId]),
    );
    await writeChanges(tx, input, versionIds, memory);
    await markSucceeded(tx, { ...input, counts: input.diff.counts }, input.diff.placements.length);
    // Media rows first, as the SQLite store writes them: a run's messages see its own media
    // (its media_changed changes, the files its thumbnails point at).
    if (input.media) await writeMediaRows(tx, input.runId, input.finishedAt, input.media, memory);
    if (input.outbox) await writeOutbox(tx, input.runId, input.outbox, memory);
    if (input.notify) await writeOutbox(tx, input.runId, input.notify, memory);
    // Delivered to every instance's listener at the commit, never for a rollback.
    await announceCommit(tx.client, input.runId);
  });
}

const LISTING_COLUMNS = [
  { name: 'position', type: 'int' },
  { name: 'version_id', type: 'bigint' },
  { name: 'valid_from_run', type: 'bigint' },
];

async function writeCoworkers(tx: Tx, { runId, diff }: RunCommit): Promise<void> {
  await insertMany(
    tx.client,
    'coworkers',
    [
      { name: 'uuid', type: 'text' },
      { name: 'first_seen_run', type: 'bigint' },
    ],
    diff.newCoworkers.map((uuid) => [uuid, runId]),
  );
  if (diff.returnedCoworkers.length > 0) {
    await run(
      tx.client,
      `update coworkers set removed_run = null, returned_count = returned_count + 1,
              last_returned_run = $1 where uuid = any($2::text[])`,
      [runId, [...diff.returnedCoworkers]],
    );
  }
  if (diff.removedCoworkers.length === 0) return;
  // The last run that still saw them is the previous successful one (this one is still running).
  const lastSeen = await latestSucceededRun(tx.db);
  await run(
    tx.client,
    `update coworkers set removed_run = $1, last_seen_run = $2 where uuid = any($3::text[])`,
    [runId, lastSeen?.id ?? null, [...diff.removedCoworkers]],
  );
}

/** Closes replaced and removed versions, inserts new ones; returns the version id of every listing entry. */
async function writeVersions(tx: Tx, { runId, diff }: RunCommit, memory: RunMemory): Promise<number[]> {
  await setWhereIds(tx.client, 'versions', 'valid_to_run', runId, diff.closedVersionIds);
  const fresh = diff.placements.flatMap((p) =>
    p.kind === 'new' ? [[p.uuid, p.slot, p.body, p.hash, runId]] : [],
  );
  const ids = await insertWithIds(
    tx.client,
    'versions',
    [
      { name: 'uuid', type: 'text' },
      { name: 'slot', type: 'int' },
      { name: 'body', type: 'text' },
      { name: 'body_hash', type: 'text' },
      { name: 'valid_from_run', type: 'bigint' },
    ],
    fresh,
  );
  let next = 0;
  return diff.placements.map((p) => {
    if (p.kind === 'keep') return p.versionId;
    memory.bodies.set(`${p.uuid}\u0000${p.slot}`, p.body);
    return ids[next++] ?? 0;
  });
}

/** An added, returned or removed change refers to the version holding its entry (commit-plans.ts). */
async function writeChanges(
  tx: Tx,
  { runId, finishedAt, diff }: RunCommit,
  versionIds: readonly number[],
  memory: RunMemory,
): Promise<void> {
  const closed = await closedVersions(tx, runId, diff.events);
  const refOf = changeVersionRefs(diff, versionIds, (uuid, slot) => closed.get(`${uuid}\u0000${slot}`));
  await insertChanges(
    tx,
    diff.events.map((e) => ({
      runId,
      at: finishedAt,
      uuid: e.uuid,
      slot: e.slot,
      kind: e.kind,
      field: e.field,
      oldValue: e.oldValue,
      newValue: e.newValue,
      versionId: refOf(e),
    })),
    memory,
  );
}

/** The versions this run closed for its removed appearances, in one statement, by uuid and slot. */
async function closedVersions(
  tx: Tx,
  runId: number,
  events: RunCommit['diff']['events'],
): Promise<Map<string, BodyHolder>> {
  const removed = events.filter((e) => e.kind === 'removed' && e.field === null);
  const out = new Map<string, BodyHolder>();
  if (removed.length === 0) return out;
  const found = await tuples<[number, string, number, string]>(
    tx.client,
    `select distinct on (v.uuid, v.slot) v.id, v.uuid, v.slot, v.body
       from versions v join unnest($2::text[], $3::int[]) as r(uuid, slot)
         on v.uuid = r.uuid and v.slot = r.slot
      where v.valid_to_run = $1
      order by v.uuid, v.slot, v.id`,
    [runId, removed.map((e) => e.uuid), removed.map((e) => e.slot)],
  );
  for (const [id, uuid, slot, body] of found) out.set(`${uuid}\u0000${slot}`, { id, body });
  return out;
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
