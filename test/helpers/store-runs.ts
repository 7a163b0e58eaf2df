import { loadConfig } from '../../src/config/load-config.js';
import type { RunStage, StageCommit, StagedEntry } from '../../src/db/run-commit.js';
import type { Store } from '../../src/db/store.js';
import { storeMaker, type StoreKind } from './postgres.js';
import { bodyHash } from '../../src/sync/body-hash.js';
import type { DiffCounts } from '../../src/sync/diff.js';
import { diffStaged } from '../../src/sync/stream-diff.js';
import { succeededRunOutbox } from '../../src/webhooks/outbox.js';

// Runs recorded through the path a sync commits by, without an upstream: the listing staged in the
// run's stage, diffed there against what is stored (diffStaged) and committed from it in one
// transaction (RunStage.commit). What a sync adds around it (the crawl, its confirmations, media)
// is the sync's own tests' business.

/** Every event type, `sync.failed` after 3 failed runs: the defaults. */
const webhookDefaults = loadConfig({}).webhooks;

/** What a run commits besides its listing; a bare run by default (no media, outbox, OPTIONS body). */
export type RunExtras = Partial<Omit<StageCommit, 'runId' | 'counts'>>;

export interface RecordedRun {
  runId: number;
  counts: DiffCounts;
}

/**
 * One succeeded run whose listing is `bodies` (entry texts, each naming its uuid), committed as a
 * sync commits: lock, stage, diff, one commit, release. A failed commit ends the run failed and
 * rethrows.
 */
export async function commitListing(
  store: Store,
  bodies: readonly string[],
  extras: RunExtras = {},
  diff: StageDiff = diffStaged,
): Promise<RecordedRun> {
  const run = await store.beginRun('http://upstream.invalid');
  try {
    return { runId: run.id, counts: await stageAndCommit(store, run.id, bodies, extras, diff) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await store.endRun({ runId: run.id, status: 'failed', error: { code: 'TEST', message } });
    throw error;
  } finally {
    await store.releaseRun(run.id);
  }
}

/** How a run's staged listing is diffed: the sync's `diffStaged` unless a test compares another way. */
export type StageDiff = (stage: RunStage, store: Store) => Promise<DiffCounts>;

/** Stages `bodies` for run `runId` (which holds the lock), diffs and commits them; the run's counts. */
export async function stageAndCommit(
  store: Store,
  runId: number,
  bodies: readonly string[],
  extras: RunExtras = {},
  diff: StageDiff = diffStaged,
): Promise<DiffCounts> {
  const pageSize = extras.pageSize ?? 8;
  const stage = await store.openStage(runId);
  try {
    await stage.append(stagedEntries(bodies, pageSize));
    await stage.holdCurrent(bodyHash);
    const counts = await diff(stage, store);
    await stage.commit({
      finishedAt: new Date().toISOString(),
      pages: Math.max(1, Math.ceil(bodies.length / pageSize)),
      optionsBody: null,
      unknownFields: [],
      media: null,
      outbox: null,
      ...extras,
      pageSize,
      runId,
      counts,
    });
    return counts;
  } finally {
    await stage.close();
  }
}

/** Entry texts as the crawl stages them: in pages of `pageSize`, each with its uuid and hash. */
export function stagedEntries(bodies: readonly string[], pageSize: number): StagedEntry[] {
  return bodies.map((body, position) => ({
    position,
    page: Math.floor(position / pageSize) + 1,
    index: position % pageSize,
    uuid: (JSON.parse(body) as { uuid: string }).uuid,
    body,
    hash: bodyHash(body),
  }));
}

/** The entry texts listed by the latest successful run, in listing order. */
export async function listedBodies(store: Store): Promise<string[]> {
  const run = await store.latestSucceededRun();
  return run ? (await store.listingAt(run)).entries : [];
}

let counter = 0;

/**
 * Records a succeeded run that added one coworker (the earlier ones stay listed), with its webhook
 * outbox, as a sync commits it: recordRunWithChange for any store.
 */
export async function commitRunWithChange(store: Store, urls: readonly string[]): Promise<number> {
  const uuid = (++counter).toString(36).padStart(32, '0');
  const body = JSON.stringify({ uuid, name: `Person ${counter}` });
  const { runId } = await commitListing(store, [...(await listedBodies(store)), body], {
    outbox: succeededRunOutbox({ ...webhookDefaults, urls }, store.endpointKeys),
  });
  return runId;
}

/**
 * Exactly `count` change rows (ids 1..count) of every entry kind, recorded by three runs as a sync
 * records them: writeChangeRows for any store. Run 1 adds `listed` coworkers; run 2 renames nine
 * in ten and drops the tenth; run 3 brings those back as they were and renames the rest it needs.
 * Texts carry what a CSV must quote (commas, quotes, line breaks) and non-ASCII text.
 */
export async function commitChangeRows(store: Store, count: number): Promise<void> {
  const listed = Math.ceil(count / 2.5);
  const dropped = Math.floor(listed / 10);
  const renamedAgain = count - 2 * listed - dropped;
  if (renamedAgain < 0 || renamedAgain > listed - dropped) throw new Error(`cannot make ${count} changes`);
  const entry = (i: number, name: string) =>
    JSON.stringify({
      uuid: `0000${String(i).padStart(4, '0')}-0000-4000-8000-000000000000`,
      name,
      post: 'Dev, ops\nand more',
    });
  const first = Array.from({ length: listed }, (_, i) => entry(i, `Zoë "Test" ${i}`));
  const kept = listed - dropped;
  const renamed = first.slice(0, kept).map((_, i) => entry(i, `Name, ${i}+1`));
  const runs = [
    first,
    renamed,
    [...renamed.map((body, i) => (i < renamedAgain ? entry(i, `Name ${i}`) : body)), ...first.slice(kept)],
  ];
  for (const bodies of runs) await commitListing(store, bodies, { pageSize: 100 });
}

/** A maker of fresh stores of `kind` (`storeMaker`), each holding `count` changes (`commitChangeRows`). */
export function storeWithChangeRows(kind: StoreKind, count: number): () => Promise<Store & { file: string }> {
  const fresh = storeMaker(kind);
  return async () => {
    const store = await fresh();
    await commitChangeRows(store, count);
    return store;
  };
}
