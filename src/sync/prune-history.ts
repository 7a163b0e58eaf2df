import type { ForgottenPerson, PruneOutcome, PruneRequest, Store } from '../db/store.js';
import { existsSync } from 'node:fs';
import type { Config } from '../config/load-config.js';
import type { Logger } from '../logger.js';
import { claimFolderFor, type FolderClaim, type FolderPlace } from '../media/claim-folder.js';
import { mediaRefs } from '../media/media-refs.js';
import { deleteDroppedCopies } from '../media/drop-files.js';
import { bodyMentionOf } from '../notify/run-outbox.js';

/** What to forget, as durations back from now (null: that part is not asked for). */
export interface PruneAges {
  /** Coworkers removed longer ago than this (`--removed-before`, PRUNE_REMOVED_AFTER). */
  removedAfterMs: number | null;
  /** Changes and closed versions older than this (`--older-than`, PRUNE_OLDER_THAN). */
  olderThanMs: number | null;
}

export interface PruneOptions {
  /** The media folder (config.media): the files the prune drops are deleted from it when it is this database's. */
  media: FolderPlace | null;
  /**
   * The folder as the run before claimed it (the prune after a sync); unset: claimed here, before
   * anything is deleted, when the folder exists (a folder of another database stops the prune).
   */
  folder?: FolderClaim;
  logger: Logger;
  /** The run whose lock the caller holds (the prune after that run's commit). */
  heldRun?: number;
  now?: Date;
}

/** What became of the dropped files' copies in the media folder. */
export interface PrunedFiles {
  /** Deleted from the folder. */
  deleted: number;
  /** Still in the folder: it is not proven this database's (`problem` says why and what to do). */
  kept: number;
  problem: string | null;
}

/** A prune as it was asked and what it did. */
export interface PruneSummary extends PruneOutcome {
  removedBefore: string | null;
  olderThan: string | null;
  files: PrunedFiles;
}

/**
 * Forgets what `ages` names (src/db/prune.ts): one transaction under the run lock, then the media
 * files no kept row needs are deleted from the media folder, as MEDIA_RETENTION deletes them (a
 * file left by a crash in between is collected by the next run, since no live row vouches for it).
 * Files are deleted only in a folder whose owner file names this database (claim-folder.ts),
 * claimed before the prune, while the files it is about to drop still count as this database's:
 * in a folder another database may use, they stay, and the summary says so.
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
  const folder = options.folder ?? (await claimExisting(options.media, store, options.logger));
  const outcome = await store.prune(request);
  const files = removeFiles(options.media, folder, outcome.droppedFiles);
  const summary = { ...outcome, removedBefore: request.removedBefore, olderThan: request.olderThan, files };
  const { droppedFiles: _files, ...logged } = summary;
  options.logger.info(logged, 'pruned');
  if (!outcome.scrubbed)
    options.logger.warn({ problem: outcome.scrubProblem }, 'pruned rows not yet scrubbed');
  if (files.problem !== null)
    options.logger.warn({ kept: files.kept, problem: files.problem }, 'pruned media files kept');
  return summary;
}

/** The media folder claimed for this database, or null when there is none to delete from. */
async function claimExisting(
  media: FolderPlace | null,
  store: Store,
  logger: Logger,
): Promise<FolderClaim | null> {
  if (media === null || !existsSync(media.dir)) return null;
  return claimFolderFor(media, store, logger);
}

/** Deletes the folder's copies of the files the prune dropped, if the folder is this database's. */
function removeFiles(
  media: FolderPlace | null,
  folder: FolderClaim | null,
  dropped: readonly string[],
): PrunedFiles {
  if (media === null || folder === null) return { deleted: 0, kept: 0, problem: null };
  const copies = deleteDroppedCopies(media.dir, folder, dropped);
  if (copies.kept === 0) return { ...copies, problem: null };
  return {
    ...copies,
    problem:
      `the media folder ${media.dir} has no owner file and holds files this database does not ` +
      'reference, so another database may use it: the files only the pruned rows needed were left ' +
      'in it. Give each database a folder of its own (MEDIA_DIR, docs/media.md), then prune again',
  };
}

/**
 * The texts by which an outbox message tells of a person: a webhook's change carries the uuid; a
 * chat or mail line names them as `describeChange` does, with a link holding the uuid only when
 * PUBLIC_BASE_URL is set.
 */
function mentions(person: ForgottenPerson): string[] {
  return [person.uuid, ...person.names.map((name) => bodyMentionOf(name, person.uuid))];
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
  config: Partial<Pick<Config, 'prune'>> & { media: FolderPlace },
  store: Store,
  run: { runId: number; folder: FolderClaim | null },
  logger: Logger,
): Promise<PruneSummary | null> {
  const ages = config.prune;
  if (ages === undefined || (ages.removedAfterMs === null && ages.olderThanMs === null)) return null;
  try {
    return await pruneHistory(store, ages, {
      media: config.media,
      ...(run.folder === null ? {} : { folder: run.folder }),
      logger,
      heldRun: run.runId,
    });
  } catch (err) {
    logger.error({ err }, 'prune after the sync failed; nothing was pruned, the next run tries again');
    return null;
  }
}
