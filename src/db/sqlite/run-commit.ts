import { and, desc, eq, isNotNull } from 'drizzle-orm';
import { MirrorError } from '../../errors.js';
import { changeVersionRefs, listingWrites, type BodyHolder } from '../commit-plans.js';
import type { MirrorDatabase } from '../open.js';
import { latestSucceededRun } from '../queries.js';
import type { CurrentListing, RemovedAppearance, RunCommit, RunEnd } from '../run-commit.js';
import type { StageCommit } from '../run-stage.js';
import { optionsBodies, runs } from '../schema.js';
import { writeMediaRows } from './media-commit.js';
import { writeOutbox } from './outbox.js';

/**
 * Reads what is current: the listing of the latest successful run (hashes, not bodies), and every
 * uuid ever seen. Rows written before body_hash existed are hashed here with `hashOf`.
 */
export function currentListing(store: MirrorDatabase, hashOf: (body: string) => string): CurrentListing {
  // Row by row into the two arrays the diff needs: at 100,000 entries an intermediate array of
  // row objects is memory the sync's peak does not need.
  const rows = store.sqlite
    .prepare(
      `select lp.id, v.id, v.uuid, v.slot, v.body_hash,
              case when v.body_hash is null then v.body end
         from listing_positions lp join versions v on v.id = lp.version_id
        where lp.valid_to_run is null
        order by lp.position`,
    )
    .raw()
    .iterate() as IterableIterator<[number, number, string, number, string | null, string | null]>;
  const appearances: CurrentListing['appearances'] = [];
  const positions: CurrentListing['positions'] = [];
  for (const [positionId, versionId, uuid, slot, hash, body] of rows) {
    appearances.push({ versionId, uuid, slot, hash: hash ?? hashOf(body ?? '') });
    positions.push({ id: positionId, versionId });
  }
  const known = new Map<string, boolean>();
  const coworkerRows = store.sqlite
    .prepare('select uuid, removed_run is not null as removed from coworkers')
    .raw()
    .iterate() as IterableIterator<[string, number]>;
  for (const [uuid, removed] of coworkerRows) known.set(uuid, removed === 1);
  return { appearances, positions, known };
}

/**
 * The removed appearances of these uuids: each slot whose newest version is closed left the
 * listing and has not come back.
 */
export function removedAppearances(
  store: MirrorDatabase,
  uuids: readonly string[],
  hashOf: (body: string) => string,
): RemovedAppearance[] {
  const statement = store.sqlite
    .prepare(
      `select v.id, v.slot, v.body_hash, v.body
         from versions v
        where v.uuid = ? and v.valid_to_run is not null
          and v.id = (select max(w.id) from versions w where w.uuid = v.uuid and w.slot = v.slot)
        order by v.slot`,
    )
    .raw();
  return uuids.flatMap((uuid) =>
    (statement.all(uuid) as [number, number, string | null, string][]).map(
      ([versionId, slot, hash, body]) => ({
        versionId,
        uuid,
        slot,
        hash: hash ?? hashOf(body),
        body,
      }),
    ),
  );
}

/**
 * Writes a run's outcome in one write transaction: the listing, the media rows it references and
 * the notifications it calls for appear entirely or not at all. Bulk rows go through prepared
 * statements on the raw handle: drizzle's per-row query building costs more than the insert itself
 * at 100,000 entries.
 */
export function commitRun(store: MirrorDatabase, input: RunCommit): void {
  store.sqlite
    .transaction(() => {
      const run = store.db.select().from(runs).where(eq(runs.id, input.runId)).get();
      if (run?.status !== 'running') {
        throw new MirrorError(
          'RUN_ABORTED',
          `run ${input.runId} is no longer running (status ${run?.status ?? 'missing'}); nothing stored`,
          { runId: input.runId },
        );
      }
      writeCoworkers(store, input);
      const versionIds = writeVersions(store, input);
      writeListing(store, input, versionIds);
      writeChanges(store, input, versionIds);
      markSucceeded(store, { ...input, counts: input.diff.counts }, input.diff.placements.length);
      // Media rows first: a notification's thumbnails are the media this run holds.
      if (input.media) writeMediaRows(store, input.runId, input.media);
      if (input.outbox) writeOutbox(store, input.runId, input.outbox);
      if (input.notify) writeOutbox(store, input.runId, input.notify);
    })
    .immediate();
}

/** The run marked succeeded with its figures, its OPTIONS body kept or upserted. */
export function markSucceeded(store: MirrorDatabase, input: StageCommit, entries: number): void {
  // An OPTIONS request that failed this time keeps the body the upstream gave before.
  const optionsBodyId =
    input.optionsBody === null ? previousOptionsBodyId(store) : upsertOptionsBody(store, input.optionsBody);
  store.db
    .update(runs)
    .set({
      status: 'succeeded',
      finishedAt: input.finishedAt,
      pages: input.pages,
      entries,
      pageSize: input.pageSize,
      ...input.counts,
      optionsBodyId,
      unknownFields: input.unknownFields.length > 0 ? JSON.stringify(input.unknownFields) : null,
    })
    .where(eq(runs.id, input.runId))
    .run();
}

function writeCoworkers(store: MirrorDatabase, { runId, diff }: RunCommit): void {
  const insert = store.sqlite.prepare('insert into coworkers (uuid, first_seen_run) values (?, ?)');
  for (const uuid of diff.newCoworkers) insert.run(uuid, runId);
  const returned = store.sqlite.prepare(
    `update coworkers set removed_run = null, returned_count = returned_count + 1,
            last_returned_run = ? where uuid = ?`,
  );
  for (const uuid of diff.returnedCoworkers) returned.run(runId, uuid);
  if (diff.removedCoworkers.length === 0) return;
  // The last run that still saw them is the previous successful one (this one is still running).
  const lastSeen = latestSucceededRun(store);
  const removed = store.sqlite.prepare(
    'update coworkers set removed_run = ?, last_seen_run = ? where uuid = ?',
  );
  for (const uuid of diff.removedCoworkers) removed.run(runId, lastSeen?.id ?? null, uuid);
}

/** Closes replaced and removed versions, inserts new ones; returns the version id of every listing entry. */
function writeVersions(store: MirrorDatabase, { runId, diff }: RunCommit): number[] {
  const close = store.sqlite.prepare('update versions set valid_to_run = ? where id = ?');
  for (const id of diff.closedVersionIds) close.run(runId, id);
  const insert = store.sqlite.prepare(
    'insert into versions (uuid, slot, body, body_hash, valid_from_run) values (?, ?, ?, ?, ?)',
  );
  return diff.placements.map((placement) =>
    placement.kind === 'keep'
      ? placement.versionId
      : Number(
          insert.run(placement.uuid, placement.slot, placement.body, placement.hash, runId).lastInsertRowid,
        ),
  );
}

/** Rewrites only the positions whose version changed, so an unchanged run writes nothing here. */
function writeListing(
  store: MirrorDatabase,
  { runId, positions }: RunCommit,
  versionIds: readonly number[],
): void {
  const close = store.sqlite.prepare('update listing_positions set valid_to_run = ? where id = ?');
  const insert = store.sqlite.prepare(
    'insert into listing_positions (position, version_id, valid_from_run) values (?, ?, ?)',
  );
  const writes = listingWrites(positions, versionIds);
  for (const id of writes.close) close.run(runId, id);
  for (const [position, versionId] of writes.open) insert.run(position, versionId, runId);
}

/**
 * An added, returned or removed change whose entry is a version's body refers to that version
 * instead of storing the text again (migration body_once); the reads resolve it (change-columns.ts).
 */
function writeChanges(store: MirrorDatabase, input: RunCommit, versionIds: readonly number[]): void {
  const { runId, diff } = input;
  const insert = store.sqlite.prepare(
    `insert into changes (run_id, uuid, slot, kind, field, old_value, new_value, version_id)
     values (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const bodyRefs = changeVersionRefs(diff, versionIds, closedVersions(store, runId));
  for (const e of diff.events) {
    const ref = bodyRefs(e);
    if (ref === null) {
      insert.run(runId, e.uuid, e.slot, e.kind, e.field, e.oldValue, e.newValue, null);
    } else if (e.kind === 'removed') {
      insert.run(runId, e.uuid, e.slot, e.kind, e.field, null, e.newValue, ref);
    } else {
      insert.run(runId, e.uuid, e.slot, e.kind, e.field, e.oldValue, null, ref);
    }
  }
}

/** The version this run closed for a removed appearance, read inside the commit. */
function closedVersions(
  store: MirrorDatabase,
  runId: number,
): (uuid: string, slot: number) => BodyHolder | undefined {
  const statement = store.sqlite.prepare(
    'select id, body from versions where uuid = ? and slot = ? and valid_to_run = ? order by id limit 1',
  );
  return (uuid, slot) => statement.get(uuid, slot, runId) as BodyHolder | undefined;
}

function previousOptionsBodyId(store: MirrorDatabase): number | null {
  const row = store.db
    .select({ id: runs.optionsBodyId })
    .from(runs)
    .where(and(eq(runs.status, 'succeeded'), isNotNull(runs.optionsBodyId)))
    .orderBy(desc(runs.id))
    .limit(1)
    .get();
  return row?.id ?? null;
}

function upsertOptionsBody(store: MirrorDatabase, body: string): number {
  const existing = store.db
    .select({ id: optionsBodies.id })
    .from(optionsBodies)
    .where(eq(optionsBodies.body, body))
    .get();
  if (existing) return existing.id;
  return store.db.insert(optionsBodies).values({ body }).returning({ id: optionsBodies.id }).get().id;
}

/** Records a run's end without data, and the notification it calls for, in one transaction. */
export function endRun(store: MirrorDatabase, end: RunEnd): void {
  store.sqlite
    .transaction(() => {
      store.db
        .update(runs)
        .set({
          status: end.status,
          finishedAt: new Date().toISOString(),
          errorCode: end.error.code,
          errorMessage: end.error.message,
          pages: end.stats?.pages ?? null,
          entries: end.stats?.entries ?? null,
        })
        .where(and(eq(runs.id, end.runId), eq(runs.status, 'running')))
        .run();
      if (end.outbox) writeOutbox(store, end.runId, end.outbox);
      if (end.notify) writeOutbox(store, end.runId, end.notify);
    })
    .immediate();
}
