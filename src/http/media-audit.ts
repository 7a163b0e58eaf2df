import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';

/** How often every kept file is looked at, besides at start and after each new served run. */
export const MEDIA_AUDIT_EVERY_MS = 60 * 60_000;
/** Files looked at together in a pass: a pass never floods the disk or the event loop. */
const AUDIT_CONCURRENCY = 8;

type AuditStore = Pick<Store, 'holdsBlobs' | 'liveMediaObjects' | 'keptBlobsWithoutBytes'>;

/**
 * Which recorded media files this server cannot serve (deleted or unreadable while the folder is
 * there; on PostgreSQL, not in the folder and not in the database either). The media route reports
 * each file it fails to open and each it opens again; a pass over every kept file runs at start,
 * after each new served run and hourly, off the request path. Readiness and the status page read
 * the verdict, never the disk.
 */
export class MediaAudit {
  #lost = new Set<string>();
  #running: Promise<void> | null = null;
  #again = false;
  #timer: NodeJS.Timeout | null = null;
  readonly #store: AuditStore;
  readonly #dir: string;
  readonly #logger: Logger;

  constructor(store: AuditStore, dir: string, logger: Logger) {
    this.#store = store;
    this.#dir = dir;
    this.#logger = logger;
  }

  /** A committed file the media route could not open (the route logs it). */
  lost(sha256: string): void {
    this.#lost.add(sha256);
  }

  /**
   * A file the media route opened: served again (restored, or fetched again). When others were
   * lost with it (a folder put back), every file is looked at again.
   */
  found(sha256: string): void {
    if (this.#lost.size === 0 || !this.#lost.delete(sha256)) return;
    if (this.#lost.size > 0) void this.check();
  }

  /**
   * For readiness while files are lost: one look at one of them (never more per probe); found
   * readable again, every file is looked at again, off the probe.
   */
  async recheck(): Promise<void> {
    const [first] = this.#lost;
    if (first === undefined || this.#running) return;
    const [missing] = await unreadable([first], this.#dir);
    if (missing === undefined) void this.check();
  }

  /** What keeps recorded files from being served, or null. */
  problem(): string | null {
    const [first] = this.#lost;
    if (first === undefined) return null;
    const n = this.#lost.size;
    return (
      `${n} recorded media file${n === 1 ? '' : 's'} cannot be read from ${this.#dir} (e.g. ${first}): ` +
      `${n === 1 ? 'it answers' : 'they answer'} 503 until restored from a backup or fetched again by the next sync`
    );
  }

  /** One pass over every kept file now (a pass under way is followed by one more). */
  check(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#pass()
      .catch((err: unknown) => this.#logger.warn({ err }, 'media audit failed; the last verdict stays'))
      .finally(() => {
        this.#running = null;
        if (this.#again) {
          this.#again = false;
          void this.check();
        }
      });
    return this.#running;
  }

  async #pass(): Promise<void> {
    // Where the database holds the bytes, only files it lacks depend on this folder.
    const candidates = this.#store.holdsBlobs
      ? await this.#store.keptBlobsWithoutBytes()
      : [...(await this.#store.liveMediaObjects())];
    const missing = await unreadable(candidates, this.#dir);
    // Retention may have dropped a file between the read and the look: only kept ones are lost.
    const kept = missing.length > 0 ? await this.#store.liveMediaObjects() : new Set<string>();
    const lost = new Set(missing.filter((sha) => kept.has(sha)));
    if (lost.size > 0 && lost.size !== this.#lost.size) {
      this.#logger.error({ lost: lost.size, dir: this.#dir }, 'recorded media files cannot be read');
    }
    this.#lost = lost;
  }

  start(intervalMs = MEDIA_AUDIT_EVERY_MS): void {
    if (this.#timer) clearInterval(this.#timer);
    void this.check();
    this.#timer = setInterval(() => void this.check(), intervalMs);
    this.#timer.unref();
  }

  /** Stops the schedule and waits for a pass under way. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#again = false;
    await this.#running;
  }
}

/** The sha256s whose object in `dir` cannot be read, `AUDIT_CONCURRENCY` looks at a time. */
async function unreadable(sha256s: readonly string[], dir: string): Promise<string[]> {
  const found: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < sha256s.length) {
      const sha = sha256s[next++] ?? '';
      try {
        await access(join(dir, 'objects', sha.slice(0, 2), sha), constants.R_OK);
      } catch {
        found.push(sha);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(AUDIT_CONCURRENCY, sha256s.length) }, worker));
  return found.sort();
}
