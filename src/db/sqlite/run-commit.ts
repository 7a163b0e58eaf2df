import { and, desc, eq, isNotNull } from 'drizzle-orm';
import type { MirrorDatabase } from '../open.js';
import type { RemovedAppearance, RunEnd } from '../run-commit.js';
import type { StageCommit } from '../run-stage.js';
import { optionsBodies, runs } from '../schema.js';
import { writeOutbox } from './outbox.js';

// A run's end, and what its stage's commit (stage.ts) asks of the database's own tables: the
// removed appearances a diff may take back, the run marked succeeded.

/**
 * A uuid's slots one index seek each (the next slot after the last, on versions_slot_idx), then
 * each slot's newest version by one more: what it costs does not grow with the versions a slot
 * has had, which a run that changes every entry adds to each time.
 */
export const REMOVED_APPEARANCES = `
  with recursive slots(slot) as (
    select min(slot) from versions where uuid = @uuid
    union all
    select (select min(w.slot) from versions w where w.uuid = @uuid and w.slot > slots.slot)
      from slots where slots.slot is not null
  )
  select v.id, v.slot, v.body_hash, v.body
    from slots
    join versions v on v.id = (select max(w.id) from versions w where w.uuid = @uuid and w.slot = slots.slot)
   where v.valid_to_run is not null
   order by v.slot`;

/**
 * The removed appearances of these uuids: each slot whose newest version is closed left the
 * listing and has not come back.
 */
export function removedAppearances(
  store: MirrorDatabase,
  uuids: readonly string[],
  hashOf: (body: string) => string,
): RemovedAppearance[] {
  const statement = store.sqlite.prepare(REMOVED_APPEARANCES).raw();
  return uuids.flatMap((uuid) =>
    (statement.all({ uuid }) as [number, number, string | null, string][]).map(
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
