import { resolve } from 'node:path';
import { mirrorIdOf } from '../db/store-identity.js';
import type { Store } from '../db/store.js';
import type { PreparedSnapshot } from '../drf/snapshot.js';
import type { Logger } from '../logger.js';
import { BlobCache } from '../media/blob-cache.js';
import type { FolderPlace } from '../media/claim-folder.js';
import { MediaStore } from '../media/media-store.js';
import {
  LOCAL_SNAPSHOT_FILE,
  localSnapshotBytes,
  writeLocalSnapshot,
  type LocalMedia,
  type LocalRun,
} from './local-snapshot-file.js';

/** Where the local snapshot of a media folder is (absolute: the logs and refusals name it). */
export function localSnapshotPath(mediaDir: string): string {
  return resolve(mediaDir, LOCAL_SNAPSHOT_FILE);
}

/**
 * The local snapshot's bound: a listing the sync accepted (SYNC_MAX_LISTING_BYTES), as DRF's bytes
 * (its escapes may lengthen an entry), with room for the media table beside it.
 */
export function localSnapshotMaxBytes(maxListingBytes: number): number {
  return 2 * maxListingBytes + 64 * 1024 * 1024;
}

export interface LocalSnapshotKeeperDeps {
  store: Store;
  folder: FolderPlace;
  logger: Logger;
  maxBytes: number;
}

/**
 * Keeps the served snapshot on the local disk, so a restart without the database still has
 * something to serve. Each swap asks for a write; one write at a time, and a write asked for during
 * one is done once it ends, for the newest snapshot only. On PostgreSQL the media folder is a cache:
 * every file the snapshot's answers point at is copied into it first, so the folder alone can
 * answer them.
 */
export class LocalSnapshotKeeper {
  readonly path: string;
  readonly #deps: LocalSnapshotKeeperDeps;
  readonly #files: MediaStore;
  readonly #cache: BlobCache | null;
  #next: { prepared: PreparedSnapshot; run: LocalRun } | null = null;
  #writing: Promise<void> | null = null;

  constructor(deps: LocalSnapshotKeeperDeps) {
    this.#deps = deps;
    this.path = localSnapshotPath(deps.folder.dir);
    this.#files = new MediaStore(deps.folder.dir);
    this.#cache = deps.store.holdsBlobs ? new BlobCache(deps.folder, deps.store, deps.logger) : null;
  }

  /** Asks for the snapshot just swapped in to be written (in the background). */
  save(prepared: PreparedSnapshot, run: LocalRun): void {
    this.#next = { prepared, run };
    this.#writing ??= this.#drain().finally(() => (this.#writing = null));
  }

  /** Settles once no write is under way (the server's close waits for it). */
  async idle(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #drain(): Promise<void> {
    for (let next = this.#next; next !== null; next = this.#next) {
      this.#next = null;
      try {
        await this.#write(next.prepared, next.run);
      } catch (err) {
        // The file keeps the previous snapshot; the next swap tries again.
        this.#deps.logger.warn({ err, path: this.path, runId: next.run.runId }, 'local snapshot not written');
      }
    }
  }

  async #write(prepared: PreparedSnapshot, run: LocalRun): Promise<void> {
    const { store, logger, maxBytes } = this.#deps;
    const started = performance.now();
    const mirrorId = await mirrorIdOf(store);
    const media = await this.#mediaOf(run.runId);
    const snapshot = { mirrorId, database: store.file, run, prepared, media };
    const size = localSnapshotBytes(snapshot);
    if (size > maxBytes) {
      logger.warn(
        { path: this.path, runId: run.runId, bytes: size, maxBytes },
        'local snapshot not written: larger than its bound (SYNC_MAX_LISTING_BYTES sets it)',
      );
      return;
    }
    const bytes = await writeLocalSnapshot(this.path, snapshot);
    logger.info(
      {
        path: this.path,
        runId: run.runId,
        bytes,
        media: media.length,
        ms: Math.round(performance.now() - started),
      },
      'local snapshot written',
    );
  }

  /** The media the run's answers point at, each in the folder (copied there from the database if need be). */
  async #mediaOf(runId: number): Promise<LocalMedia[]> {
    const { store } = this.#deps;
    const media: LocalMedia[] = [];
    for (const [url, sha256] of await store.mediaShasAt(runId)) {
      const blob = await store.keptBlob(sha256);
      if (!blob) continue;
      if (this.#cache !== null && !this.#files.has(sha256)) await this.#cache.fill(sha256, blob.size);
      media.push({ url, sha256, size: blob.size, contentType: blob.contentType });
    }
    return media;
  }
}
