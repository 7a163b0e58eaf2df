import type { RowOutcome, SendVerdict } from './channel.js';
import { retryDelayMs } from './retry-delay.js';

/**
 * The longest Retry-After honoured: the receiver names it, and a wait past this (or past what a
 * Date holds) would park the row for good; a longer one waits this long, then tries again.
 */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * A send's verdict as the row's next state, for every channel: a retry waits the schedule's delay
 * for its try, or the receiver's Retry-After when that is longer; past the schedule the row fails.
 */
export function outcomeOf(
  verdict: SendVerdict,
  tries: number,
  options: { retryScheduleMs: readonly number[]; now: Date; random?: () => number },
): RowOutcome {
  switch (verdict.kind) {
    case 'delivered':
      return { kind: 'delivered' };
    case 'refused':
      return { kind: 'refused', reason: verdict.reason };
    case 'failed':
      return { kind: 'failed', retriesSpent: false };
    case 'retry': {
      const delay = retryDelayMs(options.retryScheduleMs, tries + 1, options.random);
      if (delay === null) return { kind: 'failed', retriesSpent: true };
      const wait = Math.max(delay, Math.min(verdict.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
      return { kind: 'retry', nextAttemptAt: new Date(options.now.getTime() + wait) };
    }
  }
}
