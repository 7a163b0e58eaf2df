import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { eitherSignal } from '../abort.js';
import { answerExcerpt } from '../outbox/answer-excerpt.js';
import { retryAfterMs } from '../outbox/retry-after.js';
import { USER_AGENT } from '../version.js';
import { withoutUrl } from './mask-url.js';
import type { Signer } from './sign.js';

/** At most this much of a receiver's answer is read and kept in the delivery log. */
export const EXCERPT_BYTES = 1024;

export type AttemptErrorCode = 'TIMEOUT' | 'REFUSED' | 'NETWORK';

export interface AttemptTarget {
  url: string;
  webhookId: string;
  body: string;
}

export interface AttemptResult {
  at: string;
  durationMs: number;
  /** Null when no answer came (refused, timed out before the headers). */
  httpStatus: number | null;
  /** A 2xx within the deadline, body read (up to the excerpt) included. */
  ok: boolean;
  errorCode: AttemptErrorCode | null;
  error: string | null;
  excerpt: string | null;
  /** A refusal's Retry-After (a 429 or 503 saying when to come back), in ms from the answer; else null. */
  retryAfterMs: number | null;
}

/**
 * One POST of one message. The whole attempt (connect, headers, excerpt of the body) has one
 * deadline; redirects are answers, never followed; only the first KB of the answer is read.
 */
export async function sendAttempt(
  dispatcher: Dispatcher,
  target: AttemptTarget,
  options: { timeoutMs: number; signer: Signer | null; signal?: AbortSignal },
): Promise<AttemptResult> {
  const started = Date.now();
  const at = new Date(started);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': target.webhookId,
    'webhook-timestamp': String(Math.floor(started / 1000)),
  };
  if (options.signer) headers['webhook-signature'] = options.signer(target.webhookId, at, target.body);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  // The server's signal outlives every delivery: joined by hand, and left when it ends (abort.ts).
  const [signal, unfollow] = eitherSignal(deadline, options.signal);
  let httpStatus: number | null = null;
  try {
    const response = await request(target.url, {
      dispatcher,
      method: 'POST',
      headers,
      body: target.body,
      signal,
    });
    httpStatus = response.statusCode;
    const excerpt = await answerExcerpt(response.body, EXCERPT_BYTES);
    const ok = httpStatus >= 200 && httpStatus < 300;
    const error = ok
      ? null
      : httpStatus >= 300 && httpStatus < 400
        ? `answered ${httpStatus} (redirects are not followed: point WEBHOOK_URLS at the final URL)`
        : `answered ${httpStatus}`;
    return {
      at: at.toISOString(),
      durationMs: Date.now() - started,
      httpStatus,
      ok,
      errorCode: null,
      error,
      excerpt,
      retryAfterMs: ok ? null : retryAfterMs(response.headers['retry-after'], Date.now()),
    };
  } catch (thrown) {
    const { code, message } = classify(thrown, deadline, options.timeoutMs);
    // The log is served (deliveries, the API): an error that quoted the URL must not carry its token.
    return {
      at: at.toISOString(),
      durationMs: Date.now() - started,
      httpStatus,
      ok: false,
      errorCode: code,
      error: withoutUrl(message, target.url),
      excerpt: null,
      retryAfterMs: null,
    };
  } finally {
    unfollow();
  }
}

function classify(
  thrown: unknown,
  deadline: AbortSignal,
  timeoutMs: number,
): { code: AttemptErrorCode; message: string } {
  if (deadline.aborted) {
    return { code: 'TIMEOUT', message: `no complete answer within ${timeoutMs} ms (WEBHOOK_TIMEOUT)` };
  }
  const error = thrown as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const errno = error.code ?? error.cause?.code;
  if (errno === 'ECONNREFUSED') return { code: 'REFUSED', message: 'connection refused' };
  if (
    errno === 'UND_ERR_CONNECT_TIMEOUT' ||
    errno === 'UND_ERR_HEADERS_TIMEOUT' ||
    errno === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return { code: 'TIMEOUT', message: `no complete answer within ${timeoutMs} ms (WEBHOOK_TIMEOUT)` };
  }
  return { code: 'NETWORK', message: `${errno ?? 'error'}: ${error.message}` };
}
