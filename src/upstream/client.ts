import { Agent, request } from 'undici';
import type { Logger } from '../logger.js';
import { abortWith, eitherSignal } from '../abort.js';
import { defaultOf } from '../config/settings.js';
import { MirrorError, truncateForMessage, type ErrorCode } from '../errors.js';
import { parseJson } from '../json/lossless.js';
import { declaredContentLength, readBodyCapped, readExcerpt } from './read-body.js';
import {
  backoffDelay,
  defaultSleep,
  isRetryableStatus,
  parseRetryAfter,
  type Sleep,
} from './retry-policy.js';

export interface UpstreamClientOptions {
  /** Relative URLs passed to the client resolve against it. */
  baseUrl: string;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxBodyBytes?: number;
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A Retry-After longer than this fails the request instead of sleeping through it. */
  maxRetryAfterMs?: number;
  /**
   * Total time of one attempt, headers and whole body. undici's headers and body timeouts restart
   * on every chunk, so an upstream dripping a byte a second would otherwise never time out.
   */
  requestDeadlineMs?: number;
  /** `coworker-mirror/<version>` */
  userAgent: string;
  /** Sent on every request (upstream authentication); lower-case names. */
  headers?: Record<string, string>;
  logger: Logger;
  /** Cancels every request and every backoff sleep of this client. */
  signal?: AbortSignal;
  sleep?: Sleep;
  random?: () => number;
  now?: () => number;
}

/** Per-call context: `page` lands in error details; `signal` cancels just this call. */
export interface RequestContext {
  page?: number;
  signal?: AbortSignal;
  /** A tighter body cap for this call (the OPTIONS body). */
  maxBodyBytes?: number;
}

export interface TextResponse {
  status: number;
  text: string;
  /** Size of the body as received. */
  byteLength?: number;
}

/** A request in flight, for the report of a run that ran out of time. */
export interface PendingRequest {
  method: UpstreamMethod;
  url: string;
  page?: number;
  /** Since the request's current attempt started. */
  waitingMs: number;
}

export interface JsonResponse extends TextResponse {
  body: unknown;
}

export type UpstreamMethod = 'GET' | 'OPTIONS';

export interface UpstreamClient {
  getJson(url: string, context?: RequestContext): Promise<JsonResponse>;
  getText(url: string, method?: UpstreamMethod, context?: RequestContext): Promise<TextResponse>;
  /** Requests in flight, oldest first. */
  pending?(): PendingRequest[];
  close(): Promise<void>;
}

const EXCERPT_BYTES = 512;
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

type Settings = Required<Omit<UpstreamClientOptions, 'signal'>> & { signal: AbortSignal | undefined };

function withDefaults(options: UpstreamClientOptions): Settings {
  return {
    connectTimeoutMs: defaultOf('upstream', 'connectTimeoutMs'),
    headersTimeoutMs: defaultOf('upstream', 'timeoutMs'),
    bodyTimeoutMs: defaultOf('upstream', 'timeoutMs'),
    maxBodyBytes: defaultOf('upstream', 'maxBodyBytes'),
    maxAttempts: defaultOf('upstream', 'maxAttempts'),
    baseDelayMs: 500,
    maxDelayMs: 30_000,
    maxRetryAfterMs: defaultOf('upstream', 'maxRetryAfterMs'),
    requestDeadlineMs: defaultOf('upstream', 'requestDeadlineMs'),
    sleep: defaultSleep,
    random: Math.random,
    now: Date.now,
    headers: {},
    ...stripUndefined(options),
    baseUrl: options.baseUrl,
    userAgent: options.userAgent,
    logger: options.logger,
    signal: options.signal,
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** One failed attempt, before we know whether it is the last one. */
interface AttemptFailure {
  code: ErrorCode;
  reason: string;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  cause?: unknown;
}

class AttemptError extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(failure.reason);
  }
}

class DeadlineError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`no complete answer within the ${deadlineMs} ms request deadline (UPSTREAM_REQUEST_DEADLINE)`);
  }
}

function classifyThrown(error: unknown): AttemptFailure {
  if (error instanceof AttemptError) return error.failure;
  if (error instanceof DeadlineError) {
    return { code: 'UPSTREAM_TIMEOUT', reason: error.message, retryable: true, cause: error };
  }
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
    return {
      code: 'UPSTREAM_TIMEOUT',
      reason: `timed out (${code}: ${message})`,
      retryable: true,
      cause: error,
    };
  }
  // Refused, reset, "other side closed" mid-body, DNS hiccups: all transient from where we stand.
  const label = typeof code === 'string' ? `${code}: ${message}` : message;
  return { code: 'UPSTREAM_NETWORK', reason: `network error (${label})`, retryable: true, cause: error };
}

function abortedError(url: string, attempts: number, signal: AbortSignal, page?: number): MirrorError {
  return new MirrorError(
    'RUN_ABORTED',
    `request to ${url} was cancelled`,
    { url, attempts, ...(page === undefined ? {} : { page }) },
    { cause: signal.reason },
  );
}

/**
 * One attempt under its own total deadline: the timer aborts the request wherever it is (headers
 * or body), and the abort is reported as the deadline, not as a cancellation.
 */
async function attemptWithDeadline(
  agent: Agent,
  settings: Settings,
  call: { url: string; method: UpstreamMethod; maxBodyBytes: number },
  signal?: AbortSignal,
) {
  // One controller for the attempt: the deadline's timer and the caller's signal both abort it.
  const attempt = new AbortController();
  const unfollow = abortWith(attempt, [signal]);
  const timer = setTimeout(
    () => attempt.abort(new DeadlineError(settings.requestDeadlineMs)),
    settings.requestDeadlineMs,
  );
  timer.unref();
  try {
    return await attemptOnce(agent, settings, call, attempt.signal);
  } catch (error) {
    if (attempt.signal.aborted && !signal?.aborted) throw attempt.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    unfollow();
  }
}

async function attemptOnce(
  agent: Agent,
  settings: Settings,
  { url, method, maxBodyBytes }: { url: string; method: UpstreamMethod; maxBodyBytes: number },
  signal?: AbortSignal,
) {
  const headers = { ...settings.headers, 'user-agent': settings.userAgent, accept: 'application/json' };
  const response = await request(url, { dispatcher: agent, method, headers, signal });
  const status = response.statusCode;
  if (status < 200 || status > 299) {
    const excerpt = await readExcerpt(response.body, EXCERPT_BYTES);
    const retryHeader = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(
      typeof retryHeader === 'string' ? retryHeader : undefined,
      settings.now(),
    );
    throw new AttemptError({
      code: 'UPSTREAM_HTTP_STATUS',
      reason: `status ${status}, body ${truncateForMessage(excerpt, 200)}`,
      retryable: isRetryableStatus(status),
      status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  const read = await readBodyCapped(
    response.body,
    maxBodyBytes,
    declaredContentLength(response.headers['content-length']),
  );
  if (!read.ok) {
    throw new AttemptError({
      code: 'UPSTREAM_BODY_TOO_LARGE',
      reason: `body larger than the ${maxBodyBytes}-byte cap (read stopped after ${read.receivedBytes} bytes)`,
      retryable: false,
      status,
    });
  }
  return { status, bytes: read.bytes };
}

/** Waits before the next attempt; a Retry-After past the cap ends the run instead. */
function retryDelay(
  settings: Settings,
  failure: AttemptFailure,
  attempt: number,
  url: string,
  page?: number,
): number {
  const backoff = backoffDelay(attempt, settings);
  if (failure.retryAfterMs === undefined) return backoff;
  if (failure.retryAfterMs > settings.maxRetryAfterMs) {
    throw new MirrorError(
      failure.code,
      `upstream answered ${failure.status} for ${url} with a Retry-After of ${Math.ceil(failure.retryAfterMs / 1000)} s, ` +
        `longer than the ${Math.ceil(settings.maxRetryAfterMs / 1000)} s cap; failing the run instead of sleeping that long`,
      {
        url,
        attempts: attempt,
        status: failure.status,
        retryAfterMs: failure.retryAfterMs,
        ...pageDetail(page),
      },
    );
  }
  return Math.max(failure.retryAfterMs, backoff);
}

type InFlight = Set<{ method: UpstreamMethod; url: string; page?: number; since: number }>;

/** What a client's requests share: its Agent, settings, log and the requests in flight. */
interface ClientState {
  agent: Agent;
  settings: Settings;
  log: Logger;
  inFlight: InFlight;
}

/** A request's attempts, retried as its failures allow, under `signal` (the client's and the caller's). */
async function attempts(
  { agent, settings, log, inFlight }: ClientState,
  {
    target,
    method,
    context,
    signal,
  }: { target: string; method: UpstreamMethod; context: RequestContext; signal: AbortSignal | undefined },
) {
  const call = { url: target, method, maxBodyBytes: context.maxBodyBytes ?? settings.maxBodyBytes };
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw abortedError(target, attempt - 1, signal, context.page);
    const entry = { method, url: target, ...pageDetail(context.page), since: settings.now() };
    inFlight.add(entry);
    try {
      return { url: target, ...(await attemptWithDeadline(agent, settings, call, signal)) };
    } catch (error) {
      if (signal?.aborted) throw abortedError(target, attempt, signal, context.page);
      const failure = classifyThrown(error);
      if (!failure.retryable || attempt >= settings.maxAttempts) {
        throw finalError(failure, method, target, attempt, context.page);
      }
      const delayMs = retryDelay(settings, failure, attempt, target, context.page);
      log.warn(
        { url: target, method, attempt, delayMs, code: failure.code, reason: failure.reason },
        'retrying',
      );
      try {
        await settings.sleep(delayMs, signal);
      } catch (sleepError) {
        if (signal?.aborted) throw abortedError(target, attempt, signal, context.page);
        throw sleepError;
      }
    } finally {
      inFlight.delete(entry);
    }
  }
}

/**
 * An undici client for the upstream: one keep-alive Agent, capped bodies, bounded retries with full
 * jitter that honour Retry-After. Every failure is a MirrorError with { url, attempts, status?, page? }.
 */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const settings = withDefaults(options);
  const log = settings.logger.child({ module: 'upstream-client' });
  const agent = new Agent({
    connect: { timeout: settings.connectTimeoutMs },
    headersTimeout: settings.headersTimeoutMs,
    bodyTimeout: settings.bodyTimeoutMs,
  });

  const inFlight: InFlight = new Set();

  async function fetchWithRetry(url: string, method: UpstreamMethod, context: RequestContext) {
    const target = new URL(url, settings.baseUrl).href;
    const [signal, unfollow] = eitherSignal(settings.signal, context.signal);
    try {
      return await attempts({ agent, settings, log, inFlight }, { target, method, context, signal });
    } finally {
      unfollow();
    }
  }

  function pending(): PendingRequest[] {
    const now = settings.now();
    return [...inFlight]
      .sort((a, b) => a.since - b.since)
      .map(({ since, ...request }) => ({ ...request, waitingMs: now - since }));
  }

  async function getText(url: string, method: UpstreamMethod = 'GET', context: RequestContext = {}) {
    const { status, bytes } = await fetchWithRetry(url, method, context);
    return { status, text: bytes.toString('utf8'), byteLength: bytes.length };
  }

  async function getJson(url: string, context: RequestContext = {}): Promise<JsonResponse> {
    const fetched = await fetchWithRetry(url, 'GET', context);
    return decodeJson(fetched.url, fetched.status, fetched.bytes, context.page);
  }

  return { getJson, getText, pending, close: () => agent.close() };
}

function decodeJson(url: string, status: number, bytes: Buffer, page?: number): JsonResponse {
  // Attempts is 1 by construction here: a body that arrived whole but is not JSON is not retried.
  const details = { url, attempts: 1, status, ...pageDetail(page) };
  let text: string;
  try {
    // Fatal decoding: a silently replaced byte would be mirrored as data the upstream never had.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw new MirrorError('UPSTREAM_INVALID_JSON', `body of ${url} is not valid UTF-8`, details, { cause });
  }
  try {
    return { status, text, byteLength: bytes.length, body: parseJson(text, 'count') };
  } catch (cause) {
    const excerpt = truncateForMessage(text, 200);
    throw new MirrorError('UPSTREAM_INVALID_JSON', `body of ${url} is not valid JSON: ${excerpt}`, details, {
      cause,
    });
  }
}

function pageDetail(page: number | undefined): { page?: number } {
  return page === undefined ? {} : { page };
}

function finalError(
  failure: AttemptFailure,
  method: UpstreamMethod,
  url: string,
  attempts: number,
  page?: number,
): MirrorError {
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  return new MirrorError(
    failure.code,
    `${method} ${url} failed after ${tries}: ${failure.reason}`,
    {
      url,
      attempts,
      ...(failure.status === undefined ? {} : { status: failure.status }),
      ...pageDetail(page),
    },
    { cause: failure.cause },
  );
}
