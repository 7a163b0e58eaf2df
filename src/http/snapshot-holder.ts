import { defaultOf } from '../config/settings.js';
import type { RunRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { PreparedSnapshot } from '../drf/snapshot.js';
import { buildSnapshot, buildSnapshotInSlices } from './build-in-slices.js';
import { IntegrityWatch } from './integrity-watch.js';
import { loadPastSnapshot, type PastSnapshot } from './past-snapshot.js';
import { listingHorizon } from '../db/prune.js';
import type { PrunedListing } from './snapshot-source.js';

/** Default byte budget of the past snapshots kept for `?as_of=` (AS_OF_CACHE_BYTES). */
const DEFAULT_AS_OF_CACHE_BYTES = defaultOf('server', 'asOfCacheBytes');

export interface SnapshotInfo {
  runId: number;
  entries: number;
  fetchedAt: Date;
  /** The run's upstream as stored (credentials masked). */
  upstream: string;
}

/**
 * Holds the prepared snapshot of the latest successful run. A new one is built completely, then
 * swapped in with one assignment, so a request sees either the old snapshot or the new one, never a
 * mix. Another process (a `sync` run by hand) may commit at any time: `refresh` notices by the id of
 * the newest successful run, one indexed query.
 */
export class SnapshotHolder {
  #current: { prepared: PreparedSnapshot; info: SnapshotInfo } | null = null;
  /** Least recently used first (a Map keeps insertion order; a hit re-inserts). */
  #pastByRun = new Map<number, PastSnapshot>();
  #pastBytes = 0;
  /** The prune horizon the past snapshots were loaded under. */
  #horizon: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #refreshing: Promise<boolean> | null = null;
  /** A commit was seen during the build under way. */
  #again = false;
  /** The last refresh after a commit failed: the periodic tick tries again. */
  #refreshFailed = false;
  #unwatch: () => void = () => undefined;
  #onSwap: (prepared: PreparedSnapshot, info: SnapshotInfo) => void = () => undefined;
  readonly #store: Store;
  readonly #logger: Logger;
  readonly #asOfCacheBytes: number;

  /** The periodic whole-file check readiness also reports (started with the polling). */
  readonly integrity: IntegrityWatch;

  constructor(store: Store, logger: Logger, asOfCacheBytes = DEFAULT_AS_OF_CACHE_BYTES) {
    this.#store = store;
    this.#logger = logger;
    this.integrity = new IntegrityWatch(store.integrityTarget, logger);
    this.#asOfCacheBytes = asOfCacheBytes;
  }

  /** Bytes held by past snapshots (for tests and metrics). */
  get pastSnapshotBytes(): number {
    return this.#pastBytes;
  }

  get pastSnapshotRuns(): number[] {
    return [...this.#pastByRun.keys()];
  }

  get current(): PreparedSnapshot | null {
    return this.#current?.prepared ?? null;
  }

  get info(): SnapshotInfo | null {
    return this.#current?.info ?? null;
  }

  /**
   * Holds a snapshot read from elsewhere than the store (the local copy a start without its
   * database serves), until a refresh finds a newer run; it is not told to `onSwap`: it is that copy.
   */
  hold(prepared: PreparedSnapshot, info: SnapshotInfo): void {
    this.#current = { prepared, info };
  }

  /** Told of every snapshot swapped in from the store (the local copy is written from it). */
  onSwap(listener: (prepared: PreparedSnapshot, info: SnapshotInfo) => void): void {
    this.#onSwap = listener;
  }

  /** Loads the newest successful run if it is not the one held; returns true when it swapped. */
  async refresh(): Promise<boolean> {
    const run = await this.#newerRun();
    if (!run) return false;
    const started = performance.now();
    const prepared = await buildSnapshot(this.#store, run, this.current);
    // Another refresh may have swapped in this run or a newer one meanwhile.
    if ((this.#current?.info.runId ?? 0) >= run.id) return false;
    this.#swapIn(run, prepared, started, false);
    return true;
  }

  /** The newest successful run when it is not the one held (one cheap id query first). */
  async #newerRun(): Promise<RunRow | null> {
    const latestId = await this.#store.latestSucceededRunId();
    if (latestId === null || latestId === this.#current?.info.runId) return null;
    return (await this.#store.latestSucceededRun()) ?? null;
  }

  #swapIn(run: RunRow, prepared: PreparedSnapshot, started: number, sliced: boolean): void {
    const info: SnapshotInfo = {
      runId: run.id,
      entries: run.entries ?? 0,
      fetchedAt: new Date(run.finishedAt ?? run.startedAt),
      upstream: run.upstream,
    };
    this.#current = { prepared, info };
    this.#logger.info(
      { runId: run.id, entries: run.entries, ms: Math.round(performance.now() - started), sliced },
      'snapshot swapped in',
    );
    this.#onSwap(prepared, info);
  }

  /**
   * Like `refresh`, but builds the new snapshot in slices with the event loop free between them,
   * so requests (health checks included) keep being answered while a large listing is prepared.
   * One build at a time: a call during a build joins it.
   */
  refreshInBackground(): Promise<boolean> {
    this.#refreshing ??= this.#buildLatest().finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  async #buildLatest(): Promise<boolean> {
    const run = await this.#newerRun();
    if (!run) return false;
    const started = performance.now();
    const prepared = await buildSnapshotInSlices(this.#store, run, this.current);
    // A synchronous refresh may have swapped in this run or a newer one meanwhile.
    if ((this.#current?.info.runId ?? 0) >= run.id) return false;
    this.#swapIn(run, prepared, started, true);
    return true;
  }

  /**
   * The snapshot served at `asOf`, or null before the first successful run; a listing before the
   * prune horizon is no longer whole, and is answered as pruned instead.
   */
  async asOf(asOf: Date): Promise<PreparedSnapshot | null | PrunedListing> {
    const pruned = await this.#store.pruneHorizon();
    const horizon = listingHorizon(pruned);
    if (horizon !== this.#horizon) {
      // A prune took rows the past snapshots read their pages from: none is kept across it.
      this.#horizon = horizon;
      this.#pastByRun.clear();
      this.#pastBytes = 0;
    }
    if (horizon !== null && asOf.toISOString() < horizon) return { pruned };
    const run = await this.#store.latestSucceededRun(asOf.toISOString());
    if (!run) return null;
    if (run.id === this.#current?.info.runId) return this.#current.prepared;
    const cached = this.#pastByRun.get(run.id);
    if (cached) {
      this.#pastByRun.delete(run.id);
      this.#pastByRun.set(run.id, cached);
      return cached.prepared;
    }
    const past: PastSnapshot = await loadPastSnapshot(this.#store, run, (grown) => {
      // Pages built after this snapshot left the cache are the caller's, not the cache's.
      if (this.#pastByRun.get(run.id) !== past) return;
      this.#pastBytes += grown;
      this.#evictPast(run.id);
    });
    // Another request loaded this run meanwhile: one copy in the cache.
    const loaded = this.#pastByRun.get(run.id);
    if (loaded) return loaded.prepared;
    this.#pastByRun.set(run.id, past);
    this.#pastBytes += past.bytes;
    this.#evictPast(run.id);
    return past.prepared;
  }

  /**
   * Drops least recently used past snapshots until the cache fits its byte budget. The one being
   * served (`keep`) stays until its request is answered, even alone over budget; it goes next time.
   */
  #evictPast(keep: number): void {
    for (const [runId, past] of this.#pastByRun) {
      if (this.#pastBytes <= this.#asOfCacheBytes) return;
      if (runId === keep) continue;
      this.#pastByRun.delete(runId);
      this.#pastBytes -= past.bytes;
    }
    if (this.#pastBytes > this.#asOfCacheBytes && this.#pastByRun.size === 1) {
      // Only the one in use is left and it alone is over budget: forget it (the caller holds it).
      const only = this.#pastByRun.get(keep);
      if (only) this.#pastBytes -= only.bytes;
      this.#pastByRun.delete(keep);
    }
  }

  /**
   * What is wrong with the database right now (a cheap read of every table, and whether the file
   * on disk is still the one opened), or null. For readiness.
   */
  async databaseProblem(): Promise<string | null> {
    return (await this.#store.databaseProblem()) ?? this.integrity.problem();
  }

  /**
   * Watches for snapshots committed by other processes or instances (the store says when: LISTEN on
   * PostgreSQL, a cheap poll on SQLite), and polls for runs whose holder died and a replaced file.
   */
  startPolling(intervalMs: number): void {
    this.stopPolling();
    this.integrity.start();
    this.#unwatch = this.#store.watchCommits(() => this.#refreshOnCommit(), {
      pollMs: intervalMs,
      onError: (err) => this.#logger.warn({ err }, 'cannot watch for commits; retrying'),
    });
    let reported: string | null = null;
    this.#timer = setInterval(() => {
      const fileProblem = this.#store.storageProblem();
      if (fileProblem !== reported && fileProblem !== null) {
        this.#logger.error(
          { db: this.#store.file, problem: fileProblem },
          'database file changed under the server',
        );
      }
      reported = fileProblem;
      this.#store
        .recoverDeadRuns()
        .then(() => {
          // A refresh that failed (the database away) is tried again: no commit may call again.
          if (this.#refreshFailed) this.#refreshOnCommit();
        })
        .catch((err: unknown) => this.#logger.warn({ err }, 'dead run recovery failed'));
    }, intervalMs);
    this.#timer.unref();
  }

  /**
   * Refreshes after a commit. A commit seen while a build is under way (it may be building an older
   * run) refreshes again once that build ends, so the newest run is never left unbuilt.
   */
  #refreshOnCommit(): void {
    if (this.#refreshing) {
      this.#again = true;
      return;
    }
    this.#again = false;
    this.refreshInBackground().then(
      () => {
        this.#refreshFailed = false;
        if (this.#again) this.#refreshOnCommit();
      },
      (err: unknown) => {
        this.#refreshFailed = true;
        this.#logger.error({ err }, 'snapshot refresh failed; still serving the previous snapshot');
      },
    );
  }

  stopPolling(): void {
    this.integrity.stop();
    this.#unwatch();
    this.#unwatch = () => undefined;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
