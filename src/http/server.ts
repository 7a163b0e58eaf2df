import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { ConfigError } from '../errors.js';
import type { MirrorDatabase } from '../db/open.js';
import type { Logger } from '../logger.js';
import { registerAdminSyncRoute, type SyncTrigger } from './api/admin-sync-route.js';
import { registerHistoryRoutes } from './api/history-routes.js';
import { createDrfHandler } from './drf-handler.js';
import { createMetrics, type Metrics } from './metrics.js';
import { registerOpsRoutes } from './ops-routes.js';
import { SnapshotHolder } from './snapshot-holder.js';

export interface ServerOptions {
  trustProxy: boolean;
  publicBaseUrl: string | null;
  cacheControl: string | null;
  staleAfterMs: number;
  snapshotPollMs: number;
  adminToken: string | null;
  /** Whole-request receive deadline (HTTP_REQUEST_TIMEOUT); default 30 s. */
  httpRequestTimeoutMs?: number;
  /** Byte budget of the `?as_of=` snapshot cache (AS_OF_CACHE_BYTES); default 64 MiB. */
  asOfCacheBytes?: number;
}

/** The server's part of the parsed configuration. */
export function serverOptionsFrom(config: Config): ServerOptions {
  return {
    trustProxy: config.trustProxy,
    publicBaseUrl: config.publicBaseUrl,
    cacheControl: config.cacheControl === 'none' ? null : config.cacheControl,
    staleAfterMs: config.staleAfterMs,
    snapshotPollMs: config.snapshotPollMs,
    adminToken: config.adminToken,
    httpRequestTimeoutMs: config.httpRequestTimeoutMs,
    asOfCacheBytes: config.asOfCacheBytes,
  };
}

export interface ServerDeps {
  store: MirrorDatabase;
  logger: Logger;
  options: ServerOptions;
  /** Enables the admin route (with an admin token); `start` passes its scheduler's trigger. */
  syncTrigger?: SyncTrigger;
}

export interface MirrorServer {
  app: FastifyInstance;
  server: Server;
  snapshots: SnapshotHolder;
  metrics: Metrics;
  /** Listens and returns the base URL, e.g. http://127.0.0.1:8000. */
  listen(port: number, host: string): Promise<string>;
  close(): Promise<void>;
}

// Paths answered by the application's own API; every other path is DRF's (list, redirect or 404).
const API_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function isApiPath(url: string | undefined): boolean {
  const path = (url ?? '/').split('?', 1)[0] ?? '/';
  return path.startsWith('/api/mirror/') || API_PATHS.has(path);
}

/**
 * Builds the HTTP service without listening. The DRF list endpoint is answered straight from
 * node:http with precomputed buffers (it is the hot path and must match DRF byte for byte); the
 * history API, health and metrics go through Fastify.
 */
export async function buildServer(deps: ServerDeps): Promise<MirrorServer> {
  const logger = deps.logger.child({ module: 'http' });
  const snapshots = new SnapshotHolder(deps.store, logger, deps.options.asOfCacheBytes);
  snapshots.refresh();
  const metrics = createMetrics(deps.store, snapshots);
  const drf = createDrfHandler({ snapshots, metrics, logger, options: deps.options });
  let server: Server | undefined;
  // Typed as Fastify's base logger so the instance keeps Fastify's default generics.
  const loggerInstance: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance,
    // Per-request lines would drown the log at thousands of requests/s; /metrics counts them.
    logController: new LogController({ disableRequestLogging: true }),
    serverFactory: (handler) => {
      // Seconds, not Node's 5 minutes: a client trickling a request must not hold a socket for long.
      // Node checks these deadlines every `connectionsCheckingInterval` (30 s by default).
      const requestTimeout = deps.options.httpRequestTimeoutMs ?? 30_000;
      const timeouts = {
        requestTimeout,
        headersTimeout: Math.min(10_000, requestTimeout),
        connectionsCheckingInterval: Math.min(1_000, requestTimeout),
      };
      server = createServer(timeouts, (req: IncomingMessage, res: ServerResponse) => {
        if (isApiPath(req.url)) {
          // The API reads no request body; without this, Fastify answers 415 to an odd
          // Content-Type before the route (and its 401) can answer.
          delete req.headers['content-type'];
          handler(req, res);
        } else drf(req, res);
      });
      return server;
    },
  });
  // The API reads no request bodies; accept and drop any so odd clients get the route's answer.
  app.removeAllContentTypeParsers();
  // Read as a buffer so Fastify enforces each route's bodyLimit (the admin route's is 1 KiB).
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    metrics.latency.observe({ route }, reply.elapsedTime / 1000);
    done();
  });
  registerOpsRoutes(app, { snapshots, metrics, staleAfterMs: deps.options.staleAfterMs });
  registerHistoryRoutes(app, deps.store, {
    publicBaseUrl: deps.options.publicBaseUrl,
    trustProxy: deps.options.trustProxy,
  });
  if (deps.options.adminToken && deps.syncTrigger) {
    registerAdminSyncRoute(app, deps.options.adminToken, deps.syncTrigger);
  }
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ detail: 'Not found.' }));
  await app.ready();
  const httpServer = server ?? app.server;
  return {
    app,
    server: httpServer,
    snapshots,
    metrics,
    async listen(port, host) {
      try {
        await app.listen({ port, host });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
          throw new ConfigError([
            {
              name: 'PORT / HOST',
              problem: `cannot listen on ${host}:${port} (${code}); choose another PORT or HOST`,
            },
          ]);
        }
        throw error;
      }
      snapshots.startPolling(deps.options.snapshotPollMs);
      const address = httpServer.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${shownHost}:${address.port}`;
    },
    async close() {
      snapshots.stopPolling();
      await app.close();
    },
  };
}
