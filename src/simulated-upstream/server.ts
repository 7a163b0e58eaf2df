import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { djangoErrorPage, type DrfRequest, type DrfResponse } from '../drf/answer.js';
import { DjangoServerError } from '../drf/media-type.js';
import { defaultOptionsBody } from '../drf/metadata.js';
import { pyJsonDumps } from '../drf/python-json.js';
import { CONTRACT_PAGE_SIZE } from '../config/settings.js';
import {
  dispatchList,
  isListPath,
  optionsAnswer,
  respondDjangoNotFound,
  type DrfOptions,
  type ViewContext,
} from '../drf/view.js';
import { LIST_PATH } from '../upstream/contract.js';
import { SimulatedData } from './data.js';
import { FaultState, type FaultSwitches } from './faults.js';
import { DEFAULT_DUP_RATE, DEFAULT_MEDIA_BASE_URL } from './generate.js';
import { listPageAnswer, resolvePage, type ListContext } from './list-page.js';
import { afterLatency, closeLoopbackServer, listenOnLoopback } from './loopback-server.js';
import { PageCache } from './page-cache.js';
import { drfAnswer, send, sendCut, sendDrf, sendOversize, toAnswer, type Answer } from './send.js';

export interface SimulatedUpstreamOptions {
  seed?: number;
  /** Rows generated when `entries` is not given; default 21 (the golden files' size). */
  count?: number;
  pageSize?: number;
  dupRate?: number;
  mediaBaseUrl?: string;
  host?: string;
  port?: number;
  /** Exact rows instead of generated ones (may be deliberately invalid). */
  entries?: readonly Record<string, unknown>[];
}

export interface RecordedRequest {
  readonly method: string;
  /** The request target as sent, e.g. `/api/model/team-block-coworker/list/?page=2`. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

export interface SimulatedUpstream {
  /** Base URL, e.g. http://127.0.0.1:40123; the listing is at `${url}${LIST_PATH}`. */
  readonly url: string;
  readonly listUrl: string;
  readonly data: SimulatedData;
  readonly faults: FaultSwitches;
  readonly requests: readonly RecordedRequest[];
  close(): Promise<void>;
}

interface Runtime extends ListContext {
  readonly faults: FaultState;
  readonly server: () => { name: string; port: string };
  readonly timers: Set<NodeJS.Timeout>;
}

// A plain site: no proxy trust, no mirror validators.
const SITE: DrfOptions = { trustProxyHeaders: false, publicBaseUrl: null, cacheControl: null };
const OPTIONS_BODY = Buffer.from(pyJsonDumps(defaultOptionsBody()));

function statusPage(status: number): Answer {
  const titles: Record<number, string> = {
    500: 'Server Error (500)',
    502: '502 Bad Gateway',
    503: '503 Service Temporarily Unavailable',
    504: '504 Gateway Time-out',
  };
  const title = titles[status] ?? String(status);
  return {
    status,
    headers: { 'Content-Type': 'text/html' },
    body: `<html><body><h1>${title}</h1></body></html>\n`,
  };
}

function throttled(retryAfter: number | string | Date): Answer {
  if (typeof retryAfter === 'number') {
    const unit = retryAfter === 1 ? 'second' : 'seconds';
    const body = `{"detail":"Request was throttled. Expected available in ${retryAfter} ${unit}."}`;
    return drfAnswer(429, body, { 'Retry-After': String(retryAfter) });
  }
  const date = typeof retryAfter === 'string' ? retryAfter : retryAfter.toUTCString();
  return drfAnswer(429, '{"detail":"Request was throttled."}', { 'Retry-After': date });
}

function serveList(rt: Runtime, req: IncomingMessage, res: ServerResponse, view: ViewContext): void {
  const { faults } = rt;
  const resolved = resolvePage(rt, view);
  const { page } = resolved;
  if (faults.match('hang', page)) return faults.record({ fault: 'hang', page });

  const failure = faults.take('status5xx', page);
  if (failure) {
    faults.record({ fault: 'status5xx', page, status: failure.status });
    return send(res, req.method, statusPage(failure.status));
  }
  const limit = faults.take('rateLimit', page);
  if (limit) {
    faults.record({ fault: 'rateLimit', page, status: 429 });
    return send(res, req.method, throttled(limit.retryAfter));
  }

  const answer = listPageAnswer(rt, view, resolved);
  if (answer.status === 200) res.once('finish', () => driftAfter(rt, page));
  if (answer.status !== 200 || view.req.method.toUpperCase() === 'HEAD') return sendDrf(res, answer);
  sendWithTransportFaults(rt, res, toAnswer(answer), page);
}

function sendWithTransportFaults(
  rt: Runtime,
  res: ServerResponse,
  answer: Answer,
  page: number | null,
): void {
  const { faults } = rt;
  const oversize = faults.match('oversizeBody', page);
  if (faults.match('invalidJson', page)) {
    faults.record({ fault: 'invalidJson', page });
    send(res, 'GET', { ...answer, body: answer.body.slice(0, -1) });
  } else if (oversize) {
    faults.record({ fault: 'oversizeBody', page });
    sendOversize(res, answer, oversize.bytes, oversize.chunked);
  } else if (faults.match('truncatedBody', page)) {
    faults.record({ fault: 'truncatedBody', page });
    sendCut(res, answer, 'close');
  } else if (faults.match('resetMidBody', page)) {
    faults.record({ fault: 'resetMidBody', page });
    sendCut(res, answer, 'reset');
  } else {
    send(res, 'GET', answer);
  }
}

// The listing changes between two page requests of one crawl, as a live site's does.
function driftAfter(rt: Runtime, page: number | null): void {
  const drift = rt.faults.active.countDrift;
  if (!drift || drift.afterPage !== page) return;
  rt.faults.clear('countDrift');
  const change = rt.data.add(drift.add, drift.at);
  rt.faults.record({ fault: 'countDrift', page, change });
}

/** DRF's answer to anything but a page: Django's redirect and 404, DRF's 405/406, OPTIONS. */
function dispatch(rt: Runtime, req: IncomingMessage): DrfResponse | ViewContext {
  const request: DrfRequest = {
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    headers: req.headers,
    server: { urlScheme: 'http', ...rt.server() },
  };
  try {
    if (!isListPath(request.url)) return respondDjangoNotFound(request, SITE);
    const dispatched = dispatchList(request, SITE);
    if (dispatched.kind === 'answer') return dispatched.answer;
    if (dispatched.kind === 'options')
      return optionsAnswer(dispatched.view, OPTIONS_BODY, defaultOptionsBody());
    return dispatched.view;
  } catch (error) {
    if (error instanceof DjangoServerError) return djangoErrorPage(request, 500);
    throw error;
  }
}

function handle(rt: Runtime, req: IncomingMessage, res: ServerResponse): void {
  const dispatched = dispatch(rt, req);
  if ('status' in dispatched) return sendDrf(res, dispatched);
  try {
    serveList(rt, req, res, dispatched);
  } catch (error) {
    if (!(error instanceof DjangoServerError)) throw error;
    sendDrf(res, djangoErrorPage(dispatched.req, 500));
  }
}

/** Starts a DRF-like list endpoint on a real loopback port; close() ends every connection. */
export async function startSimulatedUpstream(
  options: SimulatedUpstreamOptions = {},
): Promise<SimulatedUpstream> {
  const pageSize = options.pageSize ?? CONTRACT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError(`pageSize must be a positive integer`);
  const data = new SimulatedData({
    seed: options.seed ?? 1,
    count: options.count ?? 21,
    dupRate: options.dupRate ?? DEFAULT_DUP_RATE,
    mediaBaseUrl: options.mediaBaseUrl ?? DEFAULT_MEDIA_BASE_URL,
    entries: options.entries,
  });
  const requests: RecordedRequest[] = [];
  const server = createServer();
  const rt: Runtime = {
    data,
    faults: new FaultState(),
    cache: new PageCache(data, pageSize),
    pageSize,
    unorderedDraws: 0,
    timers: new Set(),
    server: () => {
      const address = server.address() as AddressInfo;
      return { name: address.address, port: String(address.port) };
    },
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers } });
    // Clients hanging up mid-answer is what several faults provoke; it is not a server error.
    res.on('error', () => undefined);
    afterLatency(rt.timers, rt.faults.active.latency ?? 0, () => handle(rt, req, res));
  });
  const url = await listenOnLoopback(server, options);
  return {
    url,
    listUrl: `${url}${LIST_PATH}`,
    data,
    faults: rt.faults,
    requests,
    close: () => closeLoopbackServer(server, rt.timers),
  };
}
