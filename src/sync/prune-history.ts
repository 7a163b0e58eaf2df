import type { Config } from '../config/load-config.js';
import type { ForgottenPerson, PruneOutcome, PruneRequest } from '../db/prune.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import { mediaRefs } from '../media/media-refs.js';
import { MediaStore } from '../media/media-store.js';
import { whoWords } from '../notify/describe-change.js';

/** What to forget, as durations back from now (null: that part is not asked for). */
export interface PruneAges {
  /** Coworkers removed longer ago than this (`--removed-before`, PRUNE_REMOVED_AFTER). */
  removedAfterMs: number | null;
  /** Changes and closed versions older than this (`--older-than`, PRUNE_OLDER_THAN). */
  olderThanMs: number | null;
}

export interface PruneOptions {
  /** The media folder: the files the prune drops are deleted from it. */
  mediaDir: string | null;
  logger: Logger;
  /** The run whose lock the caller holds (the prune after that run's commit). */
  heldRun?: number;
  now?: Date;
}

/** A prune as it was asked and what it did. */
export interface PruneSummary extends PruneOutcome {
  removedBefore: string | null;
  olderThan: string | null;
}

/**
 * Forgets what `ages` names (src/db/prune.ts): one transaction under the run lock, then the media
 * files no kept row needs are deleted from the media folder, as MEDIA_RETENTION deletes them (a
 * file left by a crash in between is collected by the next run, since no live row vouches for it).
 */
export async function pruneHistory(
  store: Store,
  ages: PruneAges,
  options: PruneOptions,
): Promise<PruneSummary> {
  const now = options.now ?? new Date();
  const back = (ms: number | null) => (ms === null ? null : new Date(now.getTime() - ms).toISOString());
  const request: PruneRequest = {
    removedBefore: back(ages.removedAfterMs),
    olderThan: back(ages.olderThanMs),
    now: now.toISOString(),
    ...(options.heldRun === undefined ? {} : { heldRun: options.heldRun }),
    mentions,
    mediaUrlsOf,
  };
  const outcome = await store.prune(request);
  if (options.mediaDir !== null && outcome.droppedFiles.length > 0) {
    const files = new MediaStore(options.mediaDir);
    for (const sha of outcome.droppedFiles) files.remove(sha);
  }
  const summary = { ...outcome, removedBefore: request.removedBefore, olderThan: request.olderThan };
  const { droppedFiles: _files, ...logged } = summary;
  options.logger.info(logged, 'pruned');
  if (!outcome.scrubbed)
    options.logger.warn({ problem: outcome.scrubProblem }, 'pruned rows not yet scrubbed');
  return summary;
}

/**
 * The texts by which an outbox message tells of a person: a webhook's change carries the uuid; a
 * chat or mail line names them as `describeChange` does, with a link holding the uuid only when
 * PUBLIC_BASE_URL is set.
 */
function mentions(person: ForgottenPerson): string[] {
  const named = person.names.map((name) => `"who":${JSON.stringify(whoWords(name, person.uuid))}`);
  return [person.uuid, ...named];
}

function mediaUrlsOf(body: string): string[] {
  let entry: unknown;
  try {
    entry = JSON.parse(body);
  } catch {
    return [];
  }
  return mediaRefs(entry).map((ref) => ref.url);
}

/**
 * The prune the settings ask for after each successful sync (PRUNE_REMOVED_AFTER, PRUNE_OLDER_THAN),
 * under the run's own lock; null when neither is set. Its failure is logged, never the run's: the
 * run is committed, and the next one prunes again.
 */
export async function pruneAfterSync(
  config: Partial<Pick<Config, 'prune'>> & { media: Pick<Config['media'], 'dir'> },
  store: Store,
  runId: number,
  logger: Logger,
): Promise<PruneSummary | null> {
  const ages = config.prune;
  if (ages === undefined || (ages.removedAfterMs === null && ages.olderThanMs === null)) return null;
  try {
    return await pruneHistory(store, ages, { mediaDir: config.media.dir, logger, heldRun: runId });
  } catch (err) {
    logger.error({ err }, 'prune after the sync failed; nothing was pruned, the next run tries again');
    return null;
  }
}
