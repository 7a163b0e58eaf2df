import { setTimeout as delay } from 'node:timers/promises';

/** Sleeps `ms`, rejecting with the signal's reason when it aborts. Injected in tests. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const defaultSleep: Sleep = async (ms, signal) => {
  await delay(ms, undefined, signal ? { signal } : undefined);
};

export interface BackoffSettings {
  baseDelayMs: number;
  maxDelayMs: number;
  /** Returns a number in [0, 1); injectable so tests can pin the jitter. */
  random: () => number;
}

/**
 * "Full jitter" backoff: a uniform delay in [0, min(max, base·2^(attempt-1))]. Spreading retries over
 * the whole window keeps several concurrent page fetches from hammering a recovering upstream in step.
 */
export function backoffDelay(attempt: number, settings: BackoffSettings): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(settings.random() * ceiling);
}

/**
 * Parses a Retry-After header (RFC 9110 §10.2.3: delta seconds or an HTTP date) into milliseconds
 * from `now`. Returns undefined when absent or unparseable, so the caller falls back to backoff.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Statuses worth another attempt: the upstream is overloaded or briefly broken, not refusing us. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}
