import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  djangoAnswer,
  djangoErrorPage,
  type DrfRequest,
  type DrfResponse,
  type ServerInfo,
} from '../drf/answer.js';
import { CONTRADICTORY_SCHEME, gunicornError, limitBroken, schemeFromHeaders } from '../drf/gunicorn.js';
import { JSON_RENDERER } from '../drf/negotiation.js';
import { pyParseQsl } from '../drf/python-url.js';
import { splitTarget } from '../drf/request-target.js';
import { isListPath, respondDjangoNotFound, respondList, type DrfOptions } from '../drf/respond.js';
import type { PreparedSnapshot } from '../drf/snapshot.js';
import { drfHeaders } from '../drf/view.js';
import { afterSessionMiddleware } from '../drf/session-middleware.js';
import type { Logger } from '../logger.js';
import { LIST_PATH } from '../upstream/contract.js';
import { parseInstant } from '../time/parse-when.js';
import { AnswerCache } from './answer-cache.js';
import type { Metrics } from './metrics.js';
import type { RouteRecorder } from './request-metrics.js';
import {
  parseGunicornHead,
  simpleRequestLine,
  unsupportedTransferCoding,
  wsgiHeaders,
} from './raw-request.js';
import { sendAnswer, writeRawAnswer } from './send-answer.js';
import type { ServerConfig } from '../config/load-config.js';
import { toMirrorError } from '../errors.js';
import { prunedListingDetail } from '../views/pruned-words.js';
import type { PrunedListing, SnapshotSource } from './snapshot-source.js';
import type { MediaRewriter } from './media-rewrite.js';
import { PageNotLoaded } from './past-snapshot.js';
import { trustedPeers } from './trusted-peers.js';

function jsonAnswer(req: DrfRequest, status: number, detail: string): DrfResponse {
  return djangoAnswer(req, status, drfHeaders(JSON_RENDERER), [Buffer.from(JSON.stringify({ detail }))]);
}

/**
 * `?as_of=<ISO time>` picks the snapshot served at that moment. DRF ignores unknown parameters and
 * keeps them in next/previous, so the parameter travels along by itself.
 */
type Picked = { snapshot: PreparedSnapshot | null } | DrfResponse;

function pickSnapshot(req: DrfRequest, snapshots: SnapshotSource): Picked | Promise<Picked> {
  const { method, url } = req;
  // Only reads of the listing travel in time; other methods get DRF's answers unchanged.
  if ((method !== 'GET' && method !== 'HEAD') || !url.includes('as_of'))
    return { snapshot: snapshots.current };
  // Read as Django reads the query; its QueryDict.get answers the last value of a repeated parameter.
  const raw = pyParseQsl(splitTarget(url).query)
    .filter(([name]) => name === 'as_of')
    .at(-1)?.[1];
  if (raw === undefined) return { snapshot: snapshots.current };
  // Strict: an impossible date (2026-02-30) or an expanded year is refused, never rolled over.
  const when = parseInstant(raw);
  if (!when.ok) {
    const shown = JSON.stringify(raw.slice(0, 100));
    return jsonAnswer(req, 400, `as_of: ${when.problem} (got ${shown}).`);
  }
  const time = when.ms;
  const found = (snapshot: PreparedSnapshot | null | PrunedListing): Picked =>
    snapshot === null
      ? jsonAnswer(
          req,
          404,
          `No snapshot as of ${new Date(time).toISOString()}: no sync had succeeded by then.`,
        )
      : 'pruned' in snapshot
        ? jsonAnswer(req, 410, prunedListingDetail(new Date(time).toISOString(), snapshot.pruned))
        : { snapshot };
  const snapshot = snapshots.asOf(new Date(time));
  return snapshot instanceof Promise ? snapshot.then(found) : found(snapshot);
}

const UNAVAILABLE = 'The history is unavailable right now; try again shortly.';

/** Loads of a past snapshot's pages one answer may wait for (a page, and the one it links to at most). */
const MAX_PAGE_LOADS = 4;

/**
 * An answer from a snapshot whose pages may come from the store (a past one, for `?as_of=`): the
 * answer is built again once the page it asked for is loaded. The current snapshot has every page.
 */
function withLoadedPages(answerOnce: () => DrfResponse, loads = 0): DrfResponse | Promise<DrfResponse> {
  try {
    return answerOnce();
  } catch (error) {
    if (!(error instanceof PageNotLoaded) || loads > MAX_PAGE_LOADS) throw error;
    // Past a few pages, the answer reads the whole listing (MEDIA_REWRITE): every page, in batches.
    const loaded = loads < MAX_PAGE_LOADS ? error.load() : error.loadAll();
    return loaded.then(() => withLoadedPages(answerOnce, loads + 1));
  }
}

/** The list path as clients send it, with nothing Django would have to decode: no parsing needed. */
function isPlainListTarget(url: string): boolean {
  if (!url.startsWith(LIST_PATH)) return false;
  const next = url.charCodeAt(LIST_PATH.length);
  return Number.isNaN(next) || next === 0x3f; // end, or '?'
}

/** The listening socket's address once it listens (gunicorn's SERVER_NAME/SERVER_PORT), else null. */
export type BoundAddress = () => { name: string; port: string } | null;

export interface DrfHandlerDeps {
  snapshots: SnapshotSource;
  metrics: Metrics;
  logger: Logger;
  options: ServerConfig;
  /** The address of the listener the handler answers on (see `DrfHandler.on` for another). */
  boundAddress: BoundAddress;
  /** MEDIA_REWRITE: the snapshot to answer from, with the mirror's media URLs for this request. */
  rewriteMedia?: MediaRewriter;
}

/** What gunicorn would have made of a request before Django: the method, scheme and server. */
interface Incoming {
  method: string;
  url: string;
  /** Bytes of the request line: method, target and version with their two spaces. */
  lineBytes: number;
  headers: IncomingMessage['headers'];
  rawHeaders: readonly string[];
  peer: string | undefined;
}

export interface DrfHandler {
  /** node:http's request listener for every non-API path. */
  (req: IncomingMessage, res: ServerResponse): void;
  /** Answers a request Node's parser refused (an unknown or lower-case method) from its raw bytes. */
  answerRefused(packet: Buffer, socket: Socket): boolean;
  /**
   * The same site on another listener (INTERNAL_PORT): its own SERVER_NAME and SERVER_PORT, the
   * same snapshots, answer cache and metrics.
   */
  on(boundAddress: BoundAddress): DrfHandler;
}

interface Answered {
  answer: DrfResponse;
  route: string;
}

/** An answer now, or later when it needs the store (`?as_of=`, a snapshot's media map). */
type MaybeLater<T> = T | Promise<T>;

/** The list view behind the answer cache: the same request asked again is one map lookup. */
function cachedListAnswerer(
  deps: DrfHandlerDeps,
  drfOptions: DrfOptions,
): (request: DrfRequest, snapshot: PreparedSnapshot | null) => MaybeLater<DrfResponse> {
  const cache = new AnswerCache(deps.options.listCacheBytes);
  const { rewriteMedia } = deps;
  const answerFrom = (request: DrfRequest, stored: PreparedSnapshot | null): MaybeLater<DrfResponse> => {
    // The rewriter keeps one rewritten snapshot per base URL, so the cache's identity check holds.
    let snapshot: PreparedSnapshot | null;
    try {
      snapshot = stored && rewriteMedia ? rewriteMedia.rewrite(stored, request.headers) : stored;
    } catch (error) {
      // Rewriting reads every entry: a past snapshot loads all its pages first, in batches.
      if (!(error instanceof PageNotLoaded)) throw error;
      return error.loadAll().then(() => answerFrom(request, stored));
    }
    const { server } = request;
    const key = snapshot
      ? AnswerCache.key(
          request.method,
          request.url,
          request.headers,
          server?.urlScheme ?? 'http',
          drfOptions.trustProxyHeaders,
          server,
        )
      : null;
    const respond = () => respondList(request, snapshot, drfOptions);
    if (!snapshot || key === null) return withLoadedPages(respond);
    const cached = cache.get(snapshot, key);
    if (cached) return cached;
    const answer = withLoadedPages(respond);
    return answer instanceof Promise
      ? answer.then((later) => cache.set(snapshot, key, later))
      : cache.set(snapshot, key, answer);
  };
  return (request, stored) => {
    cache.follow(deps.snapshots.current);
    // A snapshot's media map is read from the store once; every later answer is synchronous.
    if (stored && rewriteMedia && !rewriteMedia.isLoaded(stored)) {
      return rewriteMedia.load(stored).then(() => answerFrom(request, stored));
    }
    return answerFrom(request, stored);
  };
}

/** The two ServerInfo values a listener can give, built once it listens. */
function serverInfoOf(boundAddress: BoundAddress): (scheme: 'http' | 'https') => ServerInfo | undefined {
  let servers: Record<'http' | 'https', ServerInfo> | undefined;
  return (scheme) => {
    if (servers === undefined) {
      const bound = boundAddress();
      if (bound === null) return undefined;
      servers = { http: { urlScheme: 'http', ...bound }, https: { urlScheme: 'https', ...bound } };
    }
    return servers[scheme];
  };
}

/**
 * gunicorn's part (limits, scheme, server name), then Django's routing, then the list view: one
 * answerer per listener, over one list view and its cache.
 */
function createAnswerer(
  deps: DrfHandlerDeps,
): (boundAddress: BoundAddress) => (incoming: Incoming) => MaybeLater<Answered> {
  const drfOptions: DrfOptions = {
    trustProxyHeaders: deps.options.trustProxy,
    publicBaseUrl: deps.options.publicBaseUrl,
    cacheControl: deps.options.cacheControl,
  };
  const site: Site = {
    deps,
    drfOptions,
    isTrusted: trustedPeers(deps.options.forwardedAllowIps),
    listAnswer: cachedListAnswerer(deps, drfOptions),
  };
  return (boundAddress) => listenerAnswerer(site, serverInfoOf(boundAddress));
}

/** What the answerers of every listener share: the settings, the list view and its cache. */
interface Site {
  deps: DrfHandlerDeps;
  drfOptions: DrfOptions;
  isTrusted: (peer: string | undefined) => boolean;
  listAnswer: (request: DrfRequest, snapshot: PreparedSnapshot | null) => MaybeLater<DrfResponse>;
}

function listenerAnswerer(
  { deps, drfOptions, isTrusted, listAnswer }: Site,
  serverInfo: (scheme: 'http' | 'https') => ServerInfo | undefined,
): (incoming: Incoming) => MaybeLater<Answered> {
  const answer = (incoming: Incoming): MaybeLater<Answered> => {
    const broken = limitBroken(incoming.lineBytes, incoming.rawHeaders);
    if (broken !== null) return { answer: gunicornError(broken), route: 'refused' };
    const scheme = schemeFromHeaders(incoming.rawHeaders, isTrusted(incoming.peer));
    if (scheme === 'contradictory') return { answer: gunicornError(CONTRADICTORY_SCHEME), route: 'refused' };
    const server = serverInfo(scheme);
    // Plain literals, no spreads: this runs on every request.
    const request: DrfRequest =
      server === undefined
        ? { method: incoming.method, url: incoming.url, headers: incoming.headers }
        : { method: incoming.method, url: incoming.url, headers: incoming.headers, server };
    const isList = isPlainListTarget(incoming.url) || isListPath(incoming.url);
    if (!isList) return { answer: respondDjangoNotFound(request, drfOptions), route: 'other' };
    const fromPicked = (picked: Picked): MaybeLater<Answered> => {
      if ('status' in picked) return { answer: picked, route: 'list' };
      const listed = listAnswer(request, picked.snapshot);
      return listed instanceof Promise
        ? listed.then((later) => ({ answer: later, route: 'list' }))
        : { answer: listed, route: 'list' };
    };
    const picked = pickSnapshot(request, deps.snapshots);
    return picked instanceof Promise ? picked.then(fromPicked) : fromPicked(picked);
  };

  // Only the answers that read the store (`?as_of=`, a media map) wait for it: when it cannot answer
  // (PostgreSQL restarting), a 503 says "try again", while the current snapshot is still served.
  const unavailable = (incoming: Incoming, err: unknown): Answered => {
    if (toMirrorError(err).code === 'SNAPSHOT_INVALID') return failed(incoming, err);
    deps.logger.warn({ err, url: incoming.url }, 'list answer needs the database, which did not answer');
    const request = { method: incoming.method, url: incoming.url, headers: incoming.headers };
    return { answer: jsonAnswer(request, 503, UNAVAILABLE), route: 'list' };
  };
  const failed = (incoming: Incoming, err: unknown): Answered => {
    deps.logger.error({ err, url: incoming.url }, 'list endpoint failed');
    return { answer: djangoErrorPage({ method: incoming.method }, 500), route: 'list' };
  };
  const answerOrFail = (incoming: Incoming): MaybeLater<Answered> => {
    try {
      const answered = answer(incoming);
      return answered instanceof Promise
        ? answered.catch((err: unknown) => unavailable(incoming, err))
        : answered;
    } catch (err) {
      return failed(incoming, err);
    }
  };
  return (incoming) => {
    // gunicorn's own refusals never reach Django; every other answer leaves through its middleware.
    if (incoming.headers.cookie === undefined) return answerOrFail(incoming);
    const session = (answered: Answered): Answered =>
      answered.route === 'refused'
        ? answered
        : { ...answered, answer: afterSessionMiddleware(incoming, answered.answer) };
    const answered = answerOrFail(incoming);
    return answered instanceof Promise ? answered.then(session) : session(answered);
  };
}

/** An answer that came later (from the store) is written to a connection that may be gone. */
function lostAnswerReporter(logger: Logger): (url: string) => (err: unknown) => void {
  return (url) => (err) => logger.warn({ err, url }, 'a list answer could not be written');
}

/** Sends an answer now, or when it comes (a failure to write it then is reported, not thrown). */
function whenAnswered(
  answered: MaybeLater<Answered>,
  send: (answered: Answered) => void,
  lost: (err: unknown) => void,
): void {
  if (answered instanceof Promise) answered.then(send).catch(lost);
  else send(answered);
}

/** The raw node:http handler for every non-API path: the DRF list endpoint, its redirect, Django's 404. */
export function createDrfHandler(deps: DrfHandlerDeps): DrfHandler {
  const answererOn = createAnswerer(deps);
  const record = requestRecorder(deps.metrics);
  const lost = lostAnswerReporter(deps.logger);
  const on = (boundAddress: BoundAddress): DrfHandler => {
    const parts: HandlerParts = { safely: answererOn(boundAddress), record, lost };
    return Object.assign(requestHandler(parts), { answerRefused: refusedPacketAnswerer(parts), on });
  };
  return on(deps.boundAddress);
}

/** What the handlers of one listener work with: its answerer, the shared metrics and log. */
interface HandlerParts {
  safely: (incoming: Incoming) => MaybeLater<Answered>;
  record: (route: string, method: string, status: number, seconds: number) => void;
  lost: (url: string) => (err: unknown) => void;
}

/** node:http's request listener of one listener. */
function requestHandler({
  safely,
  record,
  lost,
}: HandlerParts): (req: IncomingMessage, res: ServerResponse) => void {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const incoming: Incoming = {
      method,
      url,
      lineBytes: method.length + url.length + 7 + req.httpVersion.length,
      headers: wsgiHeaders(req.headers, req.rawHeaders),
      rawHeaders: req.rawHeaders,
      peer: req.socket.remoteAddress,
    };
    // What Node's parser takes and gunicorn's refuses: a line without version, odd transfer codings.
    const refusal =
      req.httpVersionMajor === 0
        ? simpleRequestLine(method, url)
        : unsupportedTransferCoding(req.headers['transfer-encoding'], req.httpVersion);
    const send = ({ answer: chosen, route }: Answered): void => {
      // gunicorn refuses with raw bytes and closes the connection once they are out. To an HTTP/1.0
      // request it answers `HTTP/1.0 …` (Node's status line always says 1.1) and closes too.
      if (route === 'refused' || (req.httpVersionMajor === 1 && req.httpVersionMinor === 0)) {
        const version = [req.httpVersionMajor, req.httpVersionMinor];
        writeRawAnswer(req.socket, withoutHeadBody(method, chosen), version);
        req.socket.destroySoon();
      } else sendAnswer(res, chosen);
      record(route, method, chosen.status, (performance.now() - started) / 1000);
    };
    const answered = refusal === null ? safely(incoming) : { answer: refusal, route: 'refused' };
    whenAnswered(answered, send, lost(url));
  };
}

/** `DrfHandler.answerRefused` of one listener. */
function refusedPacketAnswerer({ safely, record, lost }: HandlerParts): DrfHandler['answerRefused'] {
  return (packet: Buffer, socket: Socket): boolean => {
    const parsed = parseGunicornHead(packet);
    if (parsed === null) return false;
    const started = performance.now();
    if ('refused' in parsed) {
      const method = packet.subarray(0, 5).toString('latin1').toUpperCase() === 'HEAD ' ? 'HEAD' : '';
      writeRawAnswer(socket, withoutHeadBody(method, parsed.refused));
      record('refused', 'OTHER', parsed.refused.status, (performance.now() - started) / 1000);
      return true;
    }
    const { head } = parsed;
    const { method } = head;
    const answered = safely({
      method,
      url: head.url,
      lineBytes: head.requestLine.length,
      headers: head.headers,
      rawHeaders: head.rawHeaders,
      peer: socket.remoteAddress,
    });
    const send = ({ answer: chosen, route }: Answered): void => {
      writeRawAnswer(socket, chosen, head.version);
      record(route, method, chosen.status, (performance.now() - started) / 1000);
    };
    whenAnswered(answered, send, lost(head.url));
    return true;
  };
}

/**
 * gunicorn writes its error page after a HEAD too; HTTP clients never read a HEAD's body, and bytes
 * behind it would break the connection's framing, so only its length is kept (as for DRF's answers).
 */
function withoutHeadBody(method: string, answer: DrfResponse): DrfResponse {
  return method === 'HEAD' ? { ...answer, body: [] } : answer;
}

/** One recorder per route, bound on first use (the routes are the few names the answerer gives). */
function requestRecorder(
  metrics: Metrics,
): (route: string, method: string, status: number, seconds: number) => void {
  const recorders = new Map<string, RouteRecorder>();
  return (route, method, status, seconds) => {
    let recorder = recorders.get(route);
    if (!recorder) recorders.set(route, (recorder = metrics.recorder(route)));
    recorder(method, status, seconds);
  };
}
