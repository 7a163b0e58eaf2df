import { and, desc, eq, isNotNull, lt } from 'drizzle-orm';
import type { MirrorDatabase } from '../db/open.js';
import { optionsBodies, runs } from '../db/schema.js';
import { MirrorError } from '../errors.js';
import { writeSucceededRunOutbox } from '../webhooks/outbox.js';
import type { OutboxSettings } from '../webhooks/settings.js';
import { bodyHash } from './body-hash.js';
import type { CurrentAppearance, DiffResult } from './diff.js';

export interface CurrentState {
  appearances: CurrentAppearance[];
  /** Current listing rows by position: id of the listing_positions row and its version. */
  positions: { id: number; versionId: number }[];
  known: Map<string, boolean>;
  /** Loads one stored body; the diff asks only for versions that changed or left. */
  bodyOf: (versionId: number) => string;
  /** The removed appearances of one uuid (the last state of each slot no longer listed). */
  removedOf: (uuid: string) => CurrentAppearance[];
}

/** Reads what is current: the listing of the latest successful run, and every uuid ever seen. */
export function loadCurrentState(store: MirrorDatabase): CurrentState {
  // Row by row into the two arrays the diff needs: at 100,000 entries an intermediate array of
  // row objects is memory the sync's peak does not need.
  const rows = store.sqlite
    .prepare(
      // Rows written before body_hash existed carry their body instead, hashed here.
      `select lp.id, v.id, v.uuid, v.slot, v.body_hash,
              case when v.body_hash is null then v.body end
         from listing_positions lp join versions v on v.id = lp.version_id
        where lp.valid_to_run is null
        order by lp.position`,
    )
    .raw()
    .iterate() as IterableIterator<[number, number, string, number, string | null, string | null]>;
  const appearances: CurrentAppearance[] = [];
  const positions: { id: number; versionId: number }[] = [];
  for (const [positionId, versionId, uuid, slot, hash, body] of rows) {
    appearances.push({ versionId, uuid, slot, hash: hash ?? bodyHash(body ?? '') });
    positions.push({ id: positionId, versionId });
  }
  const known = new Map<string, boolean>();
  const coworkerRows = store.sqlite
    .prepare('select uuid, removed_run is not null as removed from coworkers')
    .raw()
    .iterate() as IterableIterator<[string, number]>;
  for (const [uuid, removed] of coworkerRows) known.set(uuid, removed === 1);
  const bodyStatement = store.sqlite.prepare('select body from versions where id = ?').pluck();
  // A slot whose latest version is closed is an appearance that left and has not come back.
  const removedStatement = store.sqlite
    .prepare(
      `select v.id, v.slot, v.body_hash, case when v.body_hash is null then v.body end
         from versions v
        where v.uuid = ? and v.valid_to_run is not null
          and v.id = (select max(w.id) from versions w where w.uuid = v.uuid and w.slot = v.slot)
        order by v.slot`,
    )
    .raw();
  return {
    appearances,
    positions,
    known,
    bodyOf: (versionId) => bodyStatement.get(versionId) as string,
    removedOf: (uuid) =>
      (removedStatement.all(uuid) as [number, number, string | null, string | null][]).map(
        ([versionId, slot, hash, body]) => ({ versionId, uuid, slot, hash: hash ?? bodyHash(body ?? '') }),
      ),
  };
}

export interface CommitInput {
  runId: number;
  finishedAt: string;
  diff: DiffResult;
  state: CurrentState;
  pages: number;
  pageSize: number;
  optionsBody: string | null;
  unknownFields: readonly { field: string; page: number; index: number }[];
  /** Webhooks to enqueue in this same transaction (the outbox); none when undefined. */
  webhooks?: OutboxSettings | undefined;
}

/**
 * Writes a run's outcome in one write transaction: the new state appears entirely or not at all.
 * Bulk rows go through prepared statements on the raw handle: drizzle's per-row query building
 * costs more than the insert itself at 100,000 entries.
 */
export function commitRun(store: MirrorDatabase, input: CommitInput): void {
  store.sqlite
    .transaction(() => {
      const run = store.db.select().from(runs).where(eq(runs.id, input.runId)).get();
      if (run?.status !== 'running') {
        throw new MirrorError(
          'RUN_ABORTED',
          `run ${input.runId} is no longer running (status ${run?.status ?? 'missing'}); nothing stored`,
          {
            runId: input.runId,
          },
        );
      }
      writeCoworkers(store, input);
      const versionIds = writeVersions(store, input);
      writeListing(store, input, versionIds);
      writeChanges(store, input);
      // An OPTIONS request that failed this time keeps the body the upstream gave before.
      const optionsBodyId =
        input.optionsBody === null
          ? previousOptionsBodyId(store)
          : upsertOptionsBody(store, input.optionsBody);
      store.db
        .update(runs)
        .set({
          status: 'succeeded',
          finishedAt: input.finishedAt,
          pages: input.pages,
          entries: input.diff.placements.length,
          pageSize: input.pageSize,
          ...input.diff.counts,
          optionsBodyId,
          unknownFields: input.unknownFields.length > 0 ? JSON.stringify(input.unknownFields) : null,
        })
        .where(eq(runs.id, input.runId))
        .run();
      writeSucceededRunOutbox(store, input.runId, input.webhooks);
    })
    .immediate();
}

function writeCoworkers(store: MirrorDatabase, { runId, finishedAt, diff }: CommitInput): void {
  const insert = store.sqlite.prepare(
    'insert into coworkers (uuid, first_seen_run, first_seen_at) values (?, ?, ?)',
  );
  for (const uuid of diff.newCoworkers) insert.run(uuid, runId, finishedAt);
  const returned = store.sqlite.prepare(
    `update coworkers set removed_run = null, removed_at = null, returned_count = returned_count + 1,
            last_returned_run = ? where uuid = ?`,
  );
  for (const uuid of diff.returnedCoworkers) returned.run(runId, uuid);
  if (diff.removedCoworkers.length === 0) return;
  // The last run that still saw them is the previous successful one.
  const lastSeen = store.db
    .select({ id: runs.id, finishedAt: runs.finishedAt })
    .from(runs)
    .where(and(eq(runs.status, 'succeeded'), lt(runs.id, runId)))
    .orderBy(desc(runs.id))
    .limit(1)
    .get();
  const removed = store.sqlite.prepare(
    'update coworkers set removed_run = ?, removed_at = ?, last_seen_run = ?, last_seen_at = ? where uuid = ?',
  );
  for (const uuid of diff.removedCoworkers) {
    removed.run(runId, finishedAt, lastSeen?.id ?? null, lastSeen?.finishedAt ?? null, uuid);
  }
}

/** Closes replaced and removed versions, inserts new ones; returns the version id of every listing entry. */
function writeVersions(store: MirrorDatabase, { runId, diff }: CommitInput): number[] {
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
  { runId, state }: CommitInput,
  versionIds: readonly number[],
): void {
  const close = store.sqlite.prepare('update listing_positions set valid_to_run = ? where id = ?');
  const insert = store.sqlite.prepare(
    'insert into listing_positions (position, version_id, valid_from_run) values (?, ?, ?)',
  );
  const length = Math.max(versionIds.length, state.positions.length);
  for (let position = 0; position < length; position++) {
    const before = state.positions[position];
    const after = versionIds[position];
    if (before && before.versionId === after) continue;
    if (before) close.run(runId, before.id);
    if (after !== undefined) insert.run(position, after, runId);
  }
}

function writeChanges(store: MirrorDatabase, { runId, finishedAt, diff }: CommitInput): void {
  const insert = store.sqlite.prepare(
    `insert into changes (run_id, at, uuid, slot, kind, field, old_value, new_value)
     values (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const e of diff.events) {
    insert.run(runId, finishedAt, e.uuid, e.slot, e.kind, e.field, e.oldValue, e.newValue);
  }
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
