import { createHash } from 'node:crypto';
import type { BlobOperations, WatchOperations } from '../db/store.js';
import type { Logger } from '../logger.js';
import { claimFolderFor, type ClaimStore, type FolderClaim, type FolderPlace } from './claim-folder.js';
import { folderOwnerOf } from './folder-owner.js';
import { MediaStore } from './media-store.js';

/**
 * The media folder as a cache of the files the database holds (PostgreSQL): a file this instance
 * lacks is copied from the database once, in the background, while the request that missed it is
 * served from the database directly. A copy lands like a download: temp file, hash checked, fsync,
 * rename; so the folder only ever holds complete files named by their hash. Concurrent misses of
 * one file share one copy. The folder is claimed for the database before the first copy
 * (claim-folder.ts): a folder of another database gets no copies, and requests are served from the
 * database as before.
 */
export class BlobCache {
  readonly #files: MediaStore;
  readonly #place: FolderPlace;
  readonly #store: BlobOperations & ClaimStore;
  readonly #logger: Logger;
  readonly #filling = new Map<string, Promise<void>>();
  #claim: Promise<FolderClaim> | null = null;

  constructor(place: FolderPlace, store: BlobOperations & ClaimStore, logger: Logger) {
    this.#place = place;
    this.#files = new MediaStore(place.dir);
    this.#store = store;
    this.#logger = logger;
  }

  /** Claimed once per process; a refusal is asked again at the next miss. */
  #claimed(): Promise<FolderClaim> {
    this.#claim ??= claimFolderFor(this.#place, this.#store, this.#logger).catch((error: unknown) => {
      this.#claim = null;
      throw error;
    });
    return this.#claim;
  }

  /** Starts copying `sha256` into the folder unless a copy is under way; settles when it is done. */
  fill(sha256: string, size: number): Promise<void> {
    const running = this.#filling.get(sha256);
    if (running) return running;
    const filling = this.#copy(sha256, size)
      .catch((err: unknown) => {
        // The next miss tries again; meanwhile requests are served from the database.
        this.#logger.warn({ err, sha256 }, 'media cache fill failed');
      })
      .finally(() => this.#filling.delete(sha256));
    this.#filling.set(sha256, filling);
    return filling;
  }

  async #copy(sha256: string, size: number): Promise<void> {
    await this.#claimed();
    const source = await this.#store.openBlob(sha256, { start: 0, end: size - 1 });
    if (source === null) throw new Error(`the database holds no bytes for ${sha256}`);
    const temp = await this.#files.createTemp();
    const hash = createHash('sha256');
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        hash.update(chunk);
        await temp.handle.write(chunk);
      }
      const got = hash.digest('hex');
      if (got !== sha256) throw new Error(`the database's bytes for ${sha256} hash to ${got}`);
      await temp.handle.sync();
      await temp.handle.close();
      await this.#files.commitTemp(temp.path, sha256);
      await this.#files.flushDirectories();
    } catch (error) {
      source.destroy();
      await temp.handle.close().catch(() => undefined);
      await this.#files.discardTemp(temp.path);
      throw error;
    }
  }
}

/** How often a store that cannot announce drops is asked (unused: only PostgreSQL holds blobs). */
const SWEEP_WATCH_POLL_MS = 5_000;

/**
 * Keeps the media folder (`dir`; null: no media) of an instance whose store holds the files
 * (PostgreSQL) free of files retention dropped on any instance: after
 * every commit the store announces (a drop is announced too, after it commits), the folder's copies
 * of dropped files are deleted. One sweep at a time; commits during one ask for one more. Returns
 * the stop, which waits for a sweep under way.
 */
export function sweepDroppedBlobs(
  dir: string | null,
  store: Pick<BlobOperations, 'holdsBlobs' | 'droppedBlobs'> & WatchOperations & ClaimStore,
  logger: Logger,
): () => Promise<void> {
  if (dir === null || !store.holdsBlobs) return () => Promise.resolve();
  const files = new MediaStore(dir);
  let running: Promise<void> = Promise.resolve();
  let queued = false;
  const sweep = async (): Promise<void> => {
    queued = false;
    try {
      const removed = (await store.droppedBlobs()).filter((sha) => files.has(sha));
      // Only in a folder whose owner file names this database: a shared one keeps them.
      if (removed.length > 0) files.remove(removed, await folderOwnerOf(store));
      if (removed.length > 0)
        logger.info({ removed: removed.length, dir }, 'media cache: dropped files deleted');
    } catch (err) {
      // The next commit (or the database coming back) sweeps again; the files are never served.
      logger.warn({ err, dir }, 'media cache: dropped files not deleted; tried again after the next commit');
    }
  };
  const unwatch = store.watchCommits(
    () => {
      if (queued) return;
      queued = true;
      running = running.then(sweep);
    },
    { pollMs: SWEEP_WATCH_POLL_MS },
  );
  return async () => {
    unwatch();
    await running;
  };
}
