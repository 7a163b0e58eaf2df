import type { Store } from '../db/store.js';
import type { MediaAudit } from './media-audit.js';
import { mediaFolderProblem } from './media-folder.js';
import { mirrorMediaPath } from '../media/media-refs.js';
import { mediaUrlMapAt } from './media-rewrite.js';

interface MediaAtRun {
  runId: number | null;
  paths: Map<string, string>;
  /** Per URL, the newest bytes still held, for URLs the served run no longer lists. */
  held: Map<string, string>;
  /** The sha256s of the files still held. */
  live: Set<string>;
  hasStored: boolean;
}

/**
 * What the pages and readiness know of the mirrored media, as of the served run: the mirror's path
 * of each upstream media URL, whether any file is stored, and which cannot be read (`audit`, looked
 * at again with each new run). Read from the store once per run (`ready()`, which the page routes
 * await), so the per-image lookups of a page stay synchronous.
 */
export class ServedMedia {
  #at: MediaAtRun = { runId: null, paths: new Map(), held: new Map(), live: new Set(), hasStored: false };
  #loading: Promise<void> | null = null;
  readonly #store: Store;
  readonly #dir: string;
  readonly #runId: () => number | null;
  readonly #audit: MediaAudit;

  constructor(store: Store, dir: string, runId: () => number | null, audit: MediaAudit) {
    this.#store = store;
    this.#dir = dir;
    this.#runId = runId;
    this.#audit = audit;
  }

  /** Brings the media facts up to the served run (one read per new run; joins one in flight). */
  async ready(): Promise<void> {
    while (this.#runId() !== this.#at.runId || this.#loading) {
      this.#loading ??= this.#load().finally(() => (this.#loading = null));
      await this.#loading;
    }
  }

  async #load(): Promise<void> {
    const runId = this.#runId();
    // Held media change only with a run: read once per run, as the run's own map is.
    const [paths, heldRows, live, hasStored] = await Promise.all([
      runId === null ? new Map<string, string>() : mediaUrlMapAt(this.#store, runId),
      this.#store.heldMedia(),
      this.#store.liveMediaObjects(),
      this.#store.hasStoredMedia(),
    ]);
    const held = new Map(heldRows.map((m) => [m.url, mirrorMediaPath(m.sha256, m.url)]));
    const newRun = runId !== this.#at.runId;
    this.#at = { runId, paths, held, live, hasStored };
    // A run brings new files (and retention removes some): the verdict is looked at again.
    if (newRun) void this.#audit.check();
  }

  /** The mirror's path of an upstream media URL, or null (not mirrored, or the folder is gone). */
  path(url: string): string | null {
    if (this.folderProblem() !== null) return null;
    return this.#at.paths.get(url) ?? this.#at.held.get(url) ?? null;
  }

  /**
   * The mirror's path of given bytes of a URL (a change's "before" side), when the file is still
   * held: the old side of an image change must still show when the upstream's media host is down.
   */
  heldPath(url: string, sha256: string): string | null {
    if (this.folderProblem() !== null || !this.#at.live.has(sha256)) return null;
    return mirrorMediaPath(sha256, url);
  }

  /** What keeps stored files from being served (the media folder gone), or null. */
  folderProblem(): string | null {
    // When the database holds the bytes the folder is only a cache: its absence stops nothing.
    return mediaFolderProblem(this.#at.hasStored && !this.#store.holdsBlobs, this.#dir);
  }

  /** What keeps stored files from being served: the folder gone, or files in it unreadable; or null. */
  problem(): string | null {
    return this.folderProblem() ?? this.#audit.problem();
  }

  /** `problem` with fresh facts, for readiness. */
  async currentProblem(): Promise<string | null> {
    this.#at = { ...this.#at, hasStored: await this.#store.hasStoredMedia() };
    await this.ready();
    await this.#audit.recheck();
    return this.problem();
  }
}
