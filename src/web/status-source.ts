/**
 * What the status page needs to know that the database does not hold: where the mirror reads from
 * and when it runs next. `start` supplies it (src/main.ts); `serve` alone has no schedule and
 * passes none, and the page says so.
 */
export interface StatusSource {
  /** `demo` when the built-in simulated upstream is mirrored. The URL has its credentials masked. */
  upstream(): { mode: 'demo' | 'upstream'; url: string };
  /** The next scheduled run, null when none is scheduled. */
  nextRunAt(): Date | null;
  /** Each scheduled run may start up to this much later (SYNC_RANDOM_DELAY). */
  randomDelayMs: number;
  /** True while this process runs a sync. */
  syncRunning(): boolean;
}
