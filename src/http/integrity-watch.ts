import { quickCheck } from '../db/integrity-check.js';
import type { Logger } from '../logger.js';

/** How often readiness re-reads every page of the database, and how long one check may take. */
export const INTEGRITY_CHECK_EVERY_MS = 60 * 60_000;
export const INTEGRITY_CHECK_DEADLINE_MS = 5 * 60_000;

/**
 * Readiness's view of the whole file: `PRAGMA quick_check` at start and then hourly, off the event
 * loop. The cheap per-probe read sees only the newest row of each table; damage in the middle of a
 * b-tree (a bad disk, a copy taken mid-write) shows only here. A check that cannot finish keeps the
 * last verdict and is logged.
 */
export class IntegrityWatch {
  #problem: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopping = new AbortController();
  /** Null: a networked store, which checks itself; nothing to do here. */
  readonly #file: string | null;
  readonly #logger: Logger;

  constructor(file: string | null, logger: Logger) {
    this.#file = file;
    this.#logger = logger;
  }

  /** What the last finished check found, or null (none yet, or it found nothing). */
  problem(): string | null {
    return this.#problem;
  }

  /** Runs a check now (or joins the one running) and keeps its verdict. */
  check(): Promise<void> {
    if (this.#file === null || this.#file === ':memory:') return Promise.resolve();
    this.#running ??= this.#check().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #check(): Promise<void> {
    const { signal } = this.#stopping;
    if (this.#file === null) return;
    const verdict = await quickCheck(this.#file, { deadlineMs: INTEGRITY_CHECK_DEADLINE_MS, signal });
    if (signal.aborted) return;
    if (verdict.kind === 'unfinished') {
      this.#logger.warn(
        { db: this.#file, reason: verdict.reason },
        'database integrity check gave no verdict',
      );
      return;
    }
    if (verdict.kind === 'ok') {
      this.#problem = null;
      return;
    }
    if (this.#problem === null) {
      this.#logger.error({ db: this.#file, problems: verdict.problems }, 'database integrity check failed');
    }
    const problem = `database is damaged: quick_check found ${verdict.problems.join('; ').replaceAll('\n', ' ')}`;
    this.#problem = problem;
  }

  start(intervalMs = INTEGRITY_CHECK_EVERY_MS): void {
    this.stop();
    const run = () =>
      this.check().catch((err: unknown) =>
        this.#logger.error({ err }, 'database integrity check failed to run'),
      );
    void run();
    this.#timer = setInterval(() => void run(), intervalMs);
    this.#timer.unref();
  }

  /** Stops the schedule and a check in flight (its worker thread is terminated). */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#stopping.abort();
    this.#stopping = new AbortController();
  }
}
