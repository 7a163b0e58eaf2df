import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import { LIST_PATH } from '../upstream/contract.js';
import { DJANGO_ERROR_CONTENT_TYPE, SERVER_ERROR_PAGE } from './drf/django-pages.js';
import { pyParseQsl } from './drf/python-url.js';
import { splitTarget } from './drf/request-target.js';
import {
  isListPath,
  respondDjangoNotFound,
  respondList,
  type DrfOptions,
  type DrfRequest,
  type DrfResponse,
} from './drf/respond.js';
import type { PreparedSnapshot } from './drf/snapshot.js';
import type { Metrics } from './metrics.js';
import type { ServerOptions } from './server.js';
import type { SnapshotHolder } from './snapshot-holder.js';

const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function jsonAnswer(status: number, detail: string): DrfResponse {
  return {
    status,
    headers: [
      ['Content-Type', 'application/json'],
      ['Vary', 'Accept'],
      ['Allow', 'GET, HEAD, OPTIONS'],
    ],
    body: Buffer.from(JSON.stringify({ detail })),
  };
}

/**
 * `?as_of=<ISO time>` picks the snapshot served at that moment. DRF ignores unknown parameters and
 * keeps them in next/previous, so the parameter travels along by itself.
 */
function pickSnapshot(
  method: string,
  url: string,
  snapshots: SnapshotHolder,
): { snapshot: PreparedSnapshot | null } | DrfResponse {
  // Only reads of the listing travel in time; other methods get DRF's answers unchanged.
  if ((method !== 'GET' && method !== 'HEAD') || !url.includes('as_of'))
    return { snapshot: snapshots.current };
  // Read as Django reads the query; its QueryDict.get answers the last value of a repeated parameter.
  const raw = pyParseQsl(splitTarget(url).query)
    .filter(([name]) => name === 'as_of')
    .at(-1)?.[1];
  if (raw === undefined) return { snapshot: snapshots.current };
  const time = ISO_8601.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(time)) {
    return jsonAnswer(
      400,
      `as_of: expected an ISO 8601 time such as 2026-11-21T10:00:00Z (got ${JSON.stringify(raw.slice(0, 100))}).`,
    );
  }
  const snapshot = snapshots.asOf(new Date(time));
  if (!snapshot) {
    return jsonAnswer(
      404,
      `No snapshot as of ${new Date(time).toISOString()}: no sync had succeeded by then.`,
    );
  }
  return { snapshot };
}

const CACHE_LIMIT = 4096;

/** The list path as clients send it, with nothing Django would have to decode: no parsing needed. */
function isPlainListTarget(url: string): boolean {
  if (!url.startsWith(LIST_PATH)) return false;
  const next = url.charCodeAt(LIST_PATH.length);
  return Number.isNaN(next) || next === 0x3f; // end, or '?'
}

/**
 * Answers of one snapshot by the parts of a request that decide them (the method, the request
 * target and the few headers DRF reads). The same page asked the same way is then one map lookup:
 * no query-string rewriting, ETag hashing or buffer building per request. Kept per prepared
 * snapshot in a WeakMap, so a swapped-out snapshot takes its answers with it; bounded, so hostile
 * URLs cannot grow it without limit. `If-None-Match` bypasses it (its answer depends on the tag).
 */
class AnswerCache {
  readonly #bySnapshot = new WeakMap<PreparedSnapshot, Map<string, DrfResponse>>();

  static key(method: string, url: string, req: IncomingMessage, trustProxy: boolean): string | null {
    const h = req.headers;
    if (h['if-none-match'] !== undefined) return null;
    // JSON keeps an absent header apart from any text, e.g. the literal `Accept: undefined`.
    const parts: unknown[] = [method, url, h.host ?? null, h.accept ?? null, h.authorization ?? null];
    if (trustProxy) parts.push(h['x-forwarded-host'] ?? null, h['x-forwarded-proto'] ?? null);
    return JSON.stringify(parts);
  }

  get(snapshot: PreparedSnapshot, key: string): DrfResponse | undefined {
    return this.#bySnapshot.get(snapshot)?.get(key);
  }

  set(snapshot: PreparedSnapshot, key: string, answer: DrfResponse): void {
    let answers = this.#bySnapshot.get(snapshot);
    if (!answers) this.#bySnapshot.set(snapshot, (answers = new Map<string, DrfResponse>()));
    if (answers.size < CACHE_LIMIT) answers.set(key, answer);
  }
}

/** The raw node:http handler for every non-API path: the DRF list endpoint, its redirect, Django's 404. */
export function createDrfHandler(deps: {
  snapshots: SnapshotHolder;
  metrics: Metrics;
  logger: Logger;
  options: ServerOptions;
  /** MEDIA_REWRITE: the snapshot to answer from, with the mirror's media URLs for this request. */
  rewriteMedia?: (snapshot: PreparedSnapshot, headers: IncomingMessage['headers']) => PreparedSnapshot;
}): (req: IncomingMessage, res: ServerResponse) => void {
  const drfOptions: DrfOptions = {
    trustProxyHeaders: deps.options.trustProxy,
    publicBaseUrl: deps.options.publicBaseUrl,
    cacheControl: deps.options.cacheControl,
  };
  const cache = new AnswerCache();
  // prom-client hashes label sets on every call; bound children make a request's bookkeeping cheap.
  const counters = new Map<string, { inc(): void }>();
  const timers = new Map<string, { observe(value: number): void }>();
  const record = (route: string, method: string, status: number, seconds: number): void => {
    const key = `${route} ${method} ${status}`;
    let counter = counters.get(key);
    if (!counter) counters.set(key, (counter = deps.metrics.requests.labels(route, method, String(status))));
    counter.inc();
    let timer = timers.get(route);
    if (!timer) timers.set(route, (timer = deps.metrics.latency.labels(route)));
    timer.observe(seconds);
  };
  const listAnswer = (
    request: DrfRequest,
    req: IncomingMessage,
    stored: PreparedSnapshot | null,
  ): DrfResponse => {
    const snapshot = stored && deps.rewriteMedia ? deps.rewriteMedia(stored, req.headers) : stored;
    const key = snapshot
      ? AnswerCache.key(request.method, request.url, req, drfOptions.trustProxyHeaders)
      : null;
    if (!snapshot || key === null) return respondList(request, snapshot, drfOptions);
    const cached = cache.get(snapshot, key);
    if (cached) return cached;
    const fresh = respondList(request, snapshot, drfOptions);
    cache.set(snapshot, key, fresh);
    return fresh;
  };
  return (req, res) => {
    const started = performance.now();
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const isList = isPlainListTarget(url) || isListPath(url);
    let answer: DrfResponse;
    try {
      const request = { method, url, headers: req.headers };
      if (!isList) answer = respondDjangoNotFound(request, drfOptions);
      else {
        const picked = pickSnapshot(method, url, deps.snapshots);
        answer = 'status' in picked ? picked : listAnswer(request, req, picked.snapshot);
      }
    } catch (err) {
      deps.logger.error({ err, url }, 'list endpoint failed');
      answer = {
        status: 500,
        headers: [['Content-Type', DJANGO_ERROR_CONTENT_TYPE]],
        body: SERVER_ERROR_PAGE,
      };
    }
    send(res, method, answer);
    const route = isList ? 'list' : 'other';
    record(route, method, answer.status, (performance.now() - started) / 1000);
  };
}

function send(res: ServerResponse, method: string, answer: DrfResponse): void {
  const flat: string[] = [];
  let hasLength = false;
  for (const [name, value] of answer.headers) {
    if (name.toLowerCase() === 'content-length') hasLength = true;
    flat.push(name, value);
  }
  const noBody = method === 'HEAD' || answer.status === 304;
  if (!hasLength && answer.status !== 304) flat.push('Content-Length', String(answer.body.length));
  res.writeHead(answer.status, flat);
  res.end(noBody ? undefined : answer.body);
}
