import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import { DJANGO_ERROR_CONTENT_TYPE, SERVER_ERROR_PAGE } from './drf/django-pages.js';
import { pyParseQsl } from './drf/python-url.js';
import { splitTarget } from './drf/request-target.js';
import {
  isListPath,
  respondDjangoNotFound,
  respondList,
  type DrfOptions,
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

/** The raw node:http handler for every non-API path: the DRF list endpoint, its redirect, Django's 404. */
export function createDrfHandler(deps: {
  snapshots: SnapshotHolder;
  metrics: Metrics;
  logger: Logger;
  options: ServerOptions;
}): (req: IncomingMessage, res: ServerResponse) => void {
  const drfOptions: DrfOptions = {
    trustProxyHeaders: deps.options.trustProxy,
    publicBaseUrl: deps.options.publicBaseUrl,
    cacheControl: deps.options.cacheControl,
  };
  return (req, res) => {
    const started = performance.now();
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const isList = isListPath(url);
    let answer: DrfResponse;
    try {
      const request = { method, url, headers: req.headers };
      if (!isList) answer = respondDjangoNotFound(request, drfOptions);
      else {
        const picked = pickSnapshot(method, url, deps.snapshots);
        answer = 'status' in picked ? picked : respondList(request, picked.snapshot, drfOptions);
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
    deps.metrics.requests.inc({ route, method, status: String(answer.status) });
    deps.metrics.latency.observe({ route }, (performance.now() - started) / 1000);
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
