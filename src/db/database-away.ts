import { setTimeout as sleep } from 'node:timers/promises';
import { isMirrorError } from '../errors.js';
import type { Logger } from '../logger.js';
import { maskPassword } from '../config/database-url.js';

/**
 * The socket errors of a connection that failed or ended, as Node names them: the session is gone,
 * whatever statement it ran. PostgreSQL's error mapping reads them here too, so the two never
 * disagree about what a lost connection is.
 */
export const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The failures of an open that pass by themselves: nothing accepts connections (PostgreSQL down,
 * restarting, a host rebooting), no route or no answer, the server shutting down or out of slots.
 * A refused password, a missing database or a TLS refusal are settings to fix, never waited for.
 */
const AWAY_DRIVER_CODES: ReadonlySet<string> = new Set([
  // An unknown host is a setting to fix: DATABASE_URL names a host that does not exist.
  ...[...SOCKET_CODES].filter((code) => code !== 'ENOTFOUND'),
  // A unix socket not there yet: the server is not running.
  'ENOENT',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** Whether an open failed because the database cannot be reached right now (not a setting to fix). */
export function isDatabaseAway(error: unknown): boolean {
  if (!isMirrorError(error)) return false;
  if (error.code === 'DATABASE_TIMEOUT') return true;
  if (error.code !== 'DB_ERROR') return false;
  const code = error.details.code;
  if (typeof code === 'string') return AWAY_DRIVER_CODES.has(code) || code.startsWith('08');
  // pg says "timeout" without a code when a connect gets no answer.
  return code === null && /timeout|terminated/i.test(error.message);
}

/** The error's message for people (a password masked), as readiness and the log say it. */
export function awayCause(error: unknown): string {
  return maskPassword(error instanceof Error ? error.message : String(error));
}

interface ReconnectOptions {
  /** The first wait between attempts; doubled after each failure up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
  logger: Logger;
  /** Ends the waiting: resolves null without another attempt. */
  signal: AbortSignal;
  /** Told each failure's cause (readiness says the latest). */
  onFailure?: (cause: string) => void;
}

/**
 * Opens the store again and again, with a bounded backoff, until it opens or `signal` aborts (then
 * null). A failure that is not the database being away (a setting, a foreign upstream) ends the
 * wait by rejecting. One log line per change of cause, not one per attempt.
 */
export async function reconnect<T>(open: () => Promise<T>, options: ReconnectOptions): Promise<T | null> {
  const { logger, signal } = options;
  let delayMs = options.firstDelayMs;
  let said: string | null = null;
  let attempts = 0;
  while (!signal.aborted) {
    // An abort ends the wait early, as the next check says.
    await sleep(delayMs, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return null;
    attempts += 1;
    try {
      const opened = await open();
      logger.info({ attempts }, 'database reachable again; completing the start');
      return opened;
    } catch (error) {
      if (!isDatabaseAway(error)) throw error;
      const cause = awayCause(error);
      options.onFailure?.(cause);
      delayMs = Math.min(options.maxDelayMs, delayMs * 2);
      if (cause !== said) {
        logger.warn(
          { cause, nextTryMs: delayMs },
          'database still unavailable; trying again in the background',
        );
        said = cause;
      }
    }
  }
  return null;
}
