import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { MAX_HEADER_BYTES } from '../drf/gunicorn.js';
import type { DrfHandler } from './drf-handler.js';

import type { ServerConfig } from '../config/load-config.js';

// The list path is DRF's and the hot one: it is neither split nor looked up in Fastify's router.
function isAppRequest(url: string | undefined, isAppPath: (path: string) => boolean): boolean {
  if (url === undefined || url.startsWith('/api/model/')) return false;
  return isAppPath(url.split('?', 1)[0] ?? '/');
}

/** What else the server answers before DRF: the mirrored media, and the paths Fastify routes. */
export interface HttpServerExtras {
  /**
   * Answers `/media/<sha256>/<name>` and returns true (calling `notOurs` when no such file is
   * stored), or returns false for DRF to answer.
   */
  media?: (req: IncomingMessage, res: ServerResponse, notOurs: () => void) => boolean;
  /** True for a path a Fastify route answers (route-table.ts); every other path is DRF's. */
  isAppPath?: (path: string) => boolean;
}

const noPath = (): boolean => false;

/**
 * The node:http server in front of both sides, set up to take what gunicorn takes: its header
 * sizes, HTTP/1.1 without Host, any `Expect`, methods Node's parser does not know, and idle
 * keep-alive longer than a proxy's.
 */
export function createHttpServer(
  options: Pick<ServerConfig, 'keepAliveTimeoutMs' | 'httpRequestTimeoutMs'>,
  drf: DrfHandler,
  api: (req: IncomingMessage, res: ServerResponse) => void,
  extras: HttpServerExtras = {},
): Server {
  const { media, isAppPath = noPath } = extras;
  const route = (req: IncomingMessage, res: ServerResponse): void => {
    if (isAppRequest(req.url, isAppPath)) {
      // The API reads no request body; without this, Fastify answers 415 to an odd
      // Content-Type before the route (and its 401) can answer.
      delete req.headers['content-type'];
      api(req, res);
    } else if (!media?.(req, res, () => drf(req, res))) drf(req, res);
  };
  // Seconds, not Node's 5 minutes: a client trickling a request must not hold a socket for long.
  // Node 20 runs these timers only while a request is being received, never on an idle keep-alive
  // connection (test/http/server-setup.test.ts reuses one after more than the headers timeout), so
  // they can sit far below the 65 s idle keep-alive a proxy needs.
  const requestTimeout = options.httpRequestTimeoutMs;
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      requireHostHeader: false,
      requestTimeout,
      headersTimeout: Math.min(10_000, requestTimeout),
      // How often Node checks those deadlines (30 s by default).
      connectionsCheckingInterval: Math.min(1_000, requestTimeout),
    },
    route,
  );
  server.keepAliveTimeout = options.keepAliveTimeoutMs;
  // gunicorn ignores an Expect it does not know; Node would answer 417.
  server.on('checkExpectation', route);
  // The one listener of parser refusals (Fastify's is a no-op, see server.ts): Fastify's default
  // destroyed the socket after this one had answered, cutting a raw answer of a few MB short.
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    // What gunicorn takes and Node refuses (odd bytes, versions, framing) is parsed as gunicorn does,
    // unless a request of this connection was answered already (a body Node could not read after it).
    const answered =
      err.code?.startsWith('HPE_') === true &&
      err.rawPacket !== undefined &&
      socket.bytesWritten === 0 &&
      drf.answerRefused(err.rawPacket, socket);
    if (!answered) refuseUnparsed(err, socket);
  });
  // CONNECT is one more method to DRF: 405 from its raw head.
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    const head = Buffer.from(
      `${req.method ?? 'CONNECT'} ${req.url ?? '/'} HTTP/${req.httpVersion}\r\n` +
        req.rawHeaders.map((v, i) => (i % 2 === 0 ? `${v}: ` : `${v}\r\n`)).join('') +
        '\r\n',
      'latin1',
    );
    if (!drf.answerRefused(head, socket)) socket.destroy();
  });
  return server;
}

/**
 * Fastify's default for a request that cannot be read at all: 408 for one not received in time,
 * 431 for oversized headers, else 400; then the connection closes.
 */
function refuseUnparsed(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // node:http's own rule: no error answer behind one already under way on this connection (a 405
  // before a body Node could not read), which gunicorn too closes with nothing behind it. Node keeps
  // that answer on the socket as `_httpMessage`, its own bookkeeping, read here as its handler does.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight?.headersSent === true) {
    socket.destroySoon();
    return;
  }
  const [status, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Client Timeout']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Exceeded maximum allowed HTTP header size']
        : [400, 'Client Error'];
  const reason = STATUS_CODES[status] ?? '';
  const body = `{"error":"${reason}","message":"${message}","statusCode":${status}}`;
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
