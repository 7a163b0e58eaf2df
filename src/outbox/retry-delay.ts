/** Each delay is drawn within ±20 % of the schedule's, so endpoints that failed together spread out. */
const JITTER = 0.2;

/**
 * The delay before retry number `tries` (1-based: after the first failed attempt, retry 1), or null
 * when the schedule is spent and the delivery has failed for good.
 */
export function retryDelayMs(
  schedule: readonly number[],
  tries: number,
  random: () => number = Math.random,
): number | null {
  const base = schedule[tries - 1];
  if (base === undefined) return null;
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random())));
}
