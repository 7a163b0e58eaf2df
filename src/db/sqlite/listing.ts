import type { MirrorDatabase } from '../open.js';

/**
 * The one definition of "the listing at run N": the listing_positions spans run N saw (two `?`,
 * both the run id), on the alias `lp`. Every read of a run's listing filters with it.
 */
export const LISTED_AT_RUN = 'lp.valid_from_run <= ? and (lp.valid_to_run is null or lp.valid_to_run > ?)';

/** The version ids listed by run `runId`, in listing order: one indexed read of integers. */
export function listedVersionIds(store: MirrorDatabase, runId: number): Int32Array {
  return new Int32Array(
    store.sqlite
      .prepare(`select lp.version_id from listing_positions lp where ${LISTED_AT_RUN} order by lp.position`)
      .pluck()
      .all(runId, runId) as number[],
  );
}

/** The stored entry texts of the listing at run `runId`, in upstream order. */
export function listedBodies(store: MirrorDatabase, runId: number): string[] {
  return store.sqlite
    .prepare(
      `select v.body from listing_positions lp join versions v on v.id = lp.version_id
        where ${LISTED_AT_RUN} order by lp.position`,
    )
    .pluck()
    .all(runId, runId) as string[];
}

/** A reader of one version's stored text by id (undefined when there is no such version). */
export function versionBodyReader(store: MirrorDatabase): (versionId: number) => string | undefined {
  const statement = store.sqlite.prepare('select body from versions where id = ?').pluck();
  return (versionId) => statement.get(versionId) as string | undefined;
}

/** The stored texts of the given versions, in the order asked (undefined for an unknown id). */
export function versionBodies(store: MirrorDatabase, ids: ArrayLike<number>): (string | undefined)[] {
  const read = versionBodyReader(store);
  return Array.from(ids, (id) => read(id));
}

/** A stored OPTIONS body by id. */
export function optionsBody(store: MirrorDatabase, id: number): string | null {
  return (
    (store.sqlite.prepare('select body from options_bodies where id = ?').pluck().get(id) as string) ?? null
  );
}

/** What a snapshot of run `runId` is built from: its listed versions, a reader of their texts, its OPTIONS body. */
export interface SnapshotSource {
  versionIds: Int32Array;
  bodyOf: (versionId: number) => string | undefined;
  optionsBody: string | null;
}

/** The listing at a run as a snapshot reads it: ids at once (cheap), texts as pages are built. */
export function snapshotSource(
  store: MirrorDatabase,
  run: { id: number; optionsBodyId: number | null },
): SnapshotSource {
  return {
    versionIds: listedVersionIds(store, run.id),
    bodyOf: versionBodyReader(store),
    optionsBody: run.optionsBodyId === null ? null : optionsBody(store, run.optionsBodyId),
  };
}
