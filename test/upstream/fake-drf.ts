import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DrfResponse } from '../../src/drf/answer.js';
import {
  invalidPageAnswer,
  neighbourLinks,
  numPages,
  pageAnswer,
  pageBody,
  requestedPage,
  resultsTail,
} from '../../src/drf/list-page.js';
import { pyJsonDumps, type JsonValue } from '../../src/drf/python-json.js';
import { dispatchList, drfHeaders, optionsAnswer, type ViewContext } from '../../src/drf/view.js';
import { LIST_PATH } from '../../src/upstream/contract.js';

/** A coworker entry shaped like the contract; extra keys allowed for drift tests. */
export type Entry = Record<string, unknown> & { uuid: string };

export function makeEntry(i: number, extra: Record<string, unknown> = {}): Entry {
  return {
    uuid: `u${String(i).padStart(31, '0')}`,
    name: `Name ${i}`,
    post: i % 2 === 0 ? 'Developer' : 'head of "Fun"',
    emoji_file: i % 3 === 0 ? `http://media.test/media/e${i}.png` : null,
    emoji_file_webm: null,
    show_image: i % 2 === 0,
    images: i % 4 === 0 ? [] : [`http://media.test/media/i${i}.png`],
    ...extra,
  };
}

export function makeEntries(n: number): Entry[] {
  return Array.from({ length: n }, (_, i) => makeEntry(i));
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export interface PageInfo {
  /** The page the query asks for; 1 without `page`, NaN for junk. */
  page: number;
  /** 1-based number of this request on the server. */
  n: number;
}

/** Returns true when it answered the request itself. */
export type Intercept = (
  req: IncomingMessage,
  res: ServerResponse,
  info: PageInfo,
) => boolean | Promise<boolean>;

export interface FakeDrfOptions {
  entries?: Entry[];
  pageSize?: number;
  /** Path prefix in front of the list path, e.g. "/mount". */
  prefix?: string;
  intercept?: Intercept;
  /** Rewrites a rendered page body before it is sent. */
  transform?: (body: Record<string, unknown>, info: PageInfo) => Record<string, unknown>;
  /** Holds page ≥ 2 responses until this many requests are in flight (or a second passed). */
  gateInFlight?: number;
}

export interface FakeDrf {
  /** Base URL including the prefix. */
  baseUrl: string;
  origin: string;
  requests: SeenRequest[];
  maxInFlight: number;
  entries: Entry[];
  close(): Promise<void>;
}

export const OPTIONS_BODY =
  '{"name":"Team Block Coworker List","description":"","renders":["application/json","text/html"],"parses":["application/json","application/x-www-form-urlencoded","multipart/form-data"]}';

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    vary: 'Accept',
    allow: 'GET, HEAD, OPTIONS',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function sendDrf(res: ServerResponse, answer: DrfResponse): void {
  res.writeHead(answer.status, answer.headers.flat());
  res.end(Buffer.concat(answer.body));
}

/** Page `page` as src/drf renders it (the mirror's own DRF core); null → "Invalid page.". */
function renderPage(view: ViewContext, entries: readonly Entry[], pageSize: number): DrfResponse {
  const count = entries.length;
  const pages = numPages(count, pageSize);
  const page = requestedPage(view, pages);
  if (page === null) return invalidPageAnswer(view);
  const rows = entries.slice((page - 1) * pageSize, page * pageSize) as unknown as JsonValue[];
  const content = {
    count,
    page,
    numPages: pages,
    tail: resultsTail(rows.map((r) => pyJsonDumps(r))),
    values: () => rows,
  };
  return pageAnswer(view, pageBody(view, content, neighbourLinks(view, page, pages)));
}

async function waitForGate(state: FakeDrf, inFlight: () => number, target: number): Promise<void> {
  const until = Date.now() + 1000;
  while (inFlight() < target && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
}

export async function startFakeDrf(options: FakeDrfOptions = {}): Promise<FakeDrf> {
  const prefix = options.prefix ?? '';
  const pageSize = options.pageSize ?? 8;
  let inFlight = 0;
  let n = 0;
  const state: FakeDrf = {
    baseUrl: '',
    origin: '',
    requests: [],
    maxInFlight: 0,
    entries: options.entries ?? makeEntries(21),
    close: () => Promise.resolve(),
  };
  const server = createServer((req, res) => {
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    state.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    void handle(req, res).catch((err: unknown) => res.destroy(err as Error));
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const pageParam = url.searchParams.get('page');
    const info = { page: pageParam === null ? 1 : Number(pageParam), n: ++n };
    if (options.intercept && (await options.intercept(req, res, info))) return;
    if (url.pathname !== `${prefix}${LIST_PATH}`) return sendJson(res, 404, '{"detail":"Not found."}');
    // The core knows the list path alone: the mount prefix travels in the links' base URL.
    const dispatched = dispatchList(
      { method: req.method ?? 'GET', url: (req.url ?? '/').slice(prefix.length), headers: req.headers },
      { trustProxyHeaders: false, publicBaseUrl: `http://${req.headers.host}${prefix}`, cacheControl: null },
    );
    if (dispatched.kind === 'answer') return sendDrf(res, dispatched.answer);
    if (dispatched.kind === 'options')
      return sendDrf(res, optionsAnswer(dispatched.view, Buffer.from(OPTIONS_BODY), null));
    if (options.gateInFlight && info.page >= 2)
      await waitForGate(state, () => inFlight, options.gateInFlight);
    const answer = renderPage(dispatched.view, state.entries, pageSize);
    if (!options.transform || answer.status !== 200) return sendDrf(res, answer);
    const body = JSON.parse(Buffer.concat(answer.body).toString('utf8')) as Record<string, unknown>;
    const transformed = JSON.stringify(options.transform(body, info));
    res.writeHead(
      200,
      drfHeaders(dispatched.view.renderer)
        .flat()
        .concat('Content-Length', String(Buffer.byteLength(transformed))),
    );
    res.end(transformed);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.origin = `http://127.0.0.1:${port}`;
  state.baseUrl = `${state.origin}${prefix}`;
  state.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    });
  return state;
}
