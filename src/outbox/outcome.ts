import type { RowOutcome, SendVerdict } from './channel.js';
import { retryDelayMs } from './retry-delay.js';

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
      const wait = Math.max(delay, verdict.retryAfterMs ?? 0);
      return { kind: 'retry', nextAttemptAt: new Date(options.now.getTime() + wait) };
    }
  }
}
