import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { ConfigError } from '../errors.js';
import { defaultDeadlines, type DatabaseDeadlines } from '../config/database-deadlines.js';
import type { MediaConfig, ServerConfig } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import { registerAdminSyncRoute, type SyncTrigger } from './api/admin-sync-route.js';
import { registerDeliveryRoutes } from './api/deliveries-routes.js';
import { registerExportRoutes } from './api/export-routes.js';
import { registerHistoryRoutes } from './api/history-routes.js';
import { createDrfHandler } from './drf-handler.js';
import { registerErrorHandlers } from './error-handler.js';
import { createHttpServer } from './http-server.js';
import { createMediaHandler } from './media-route.js';
import { sweepDroppedBlobs } from '../media/blob-cache.js';
import { createMediaRewriter } from './media-rewrite.js';
import { createMetrics, type Metrics } from './metrics.js';
import { registerOpsRoutes } from './ops-routes.js';
import { createRouteTable, type RouteTable } from './route-table.js';
import { SnapshotHolder } from './snapshot-holder.js';
import { mirroredMedia } from '../web/media-source.js';
import { ServedMedia } from './served-media.js';
import { registerWeb, type WebDeps } from '../web/register.js';
import { stringifyJson } from '../json/safe-json.js';
import type { NotifyTarget } from '../notify/targets.js';

export interface ServerDeps {
  store: Store;
  logger: Logger;
  /**
   * The server's settings, and the mirrored media it serves under /media/ (the list points at them
   * with MEDIA_REWRITE); without `media` there is no media route.
   */
  config: {
    server: ServerConfig;
    media?: Pick<MediaConfig, 'dir' | 'rewrite'>;
    notify?: { urls: readonly Pick<NotifyTarget, 'id' | 'label'>[] | null };
    webhooks?: { urls: readonly string[] };
    /** DATABASE_PROBE_TIMEOUT: the deadline of /readyz's and /metrics' database reads (its default unless given). */
    database?: Pick<DatabaseDeadlines, 'probeTimeoutMs'>;
  };
  /** Enables the admin route (with an admin token); `start` passes its scheduler's trigger. */
  syncTrigger?: SyncTrigger;
  /** The people-facing pages' facts from outside the database (`start` passes its schedule). */
  web?: Pick<WebDeps, 'status' | 'media' | 'timeZone'>;
  /** How long `close` lets answers in flight finish before it cuts their connections; 10 s by default. */
  closeGraceMs?: number;
}

// As long as `start` gives a sync in flight to settle: a slow but healthy download (a 50 MB media
// file) gets the whole of the shutdown's time, not less.
const CLOSE_GRACE_MS = 10_000;

export interface MirrorServer {
  app: FastifyInstance;
  /** Every Fastify route; the front router gives DRF every path none of them answers. */
  routes: RouteTable;
  server: Server;
  snapshots: SnapshotHolder;
  metrics: Metrics;
  /** Listens and returns the base URL, e.g. http://127.0.0.1:8000. */
  listen(port: number, host: string): Promise<string>;
  close(): Promise<void>;
}

/** What a route registrar gets: everything the server built, nothing it starts. */
export interface RouteContext {
  deps: ServerDeps;
  snapshots: SnapshotHolder;
  metrics: Metrics;
  /** The mirrored media as of the served run, when media is served. */
  servedMedia: ServedMedia | undefined;
}

/** Registers Fastify routes or plugins; add one line to ROUTES for a new feature. */
export type RouteRegistrar = (app: FastifyInstance, ctx: RouteContext) => void;

const ROUTES: readonly RouteRegistrar[] = [
  (app, { deps, snapshots, metrics, servedMedia }) =>
    registerOpsRoutes(app, {
      snapshots,
      metrics,
      staleAfterMs: deps.config.server.staleAfterMs,
      probeTimeoutMs: probeTimeoutOf(deps),
      metricsToken: deps.config.server.metricsToken,
      ...(servedMedia ? { mediaProblem: () => servedMedia.currentProblem() } : {}),
    }),
  (app, { deps }) =>
    registerHistoryRoutes(app, deps.store, {
      publicBaseUrl: deps.config.server.publicBaseUrl,
      trustProxy: deps.config.server.trustProxy,
    }),
  (app, { deps }) => registerExportRoutes(app, deps.store),
  (app, { deps }) => {
    if (deps.config.server.adminToken && deps.syncTrigger) {
      registerAdminSyncRoute(app, deps.config.server.adminToken, deps.syncTrigger);
    }
  },
  (app, { deps, metrics }) =>
    registerDeliveryRoutes(app, deps.store, {
      ...deps.config.server,
      registry: metrics.registry,
      probeTimeoutMs: probeTimeoutOf(deps),
      ...(deps.config.webhooks ? { webhookUrls: deps.config.webhooks.urls } : {}),
    }),
  (app, { deps, snapshots, servedMedia }) =>
    registerWeb(app, {
      store: deps.store,
      logger: deps.logger.child({ module: 'http' }),
      served: () => snapshots.info,
      staleAfterMs: deps.config.server.staleAfterMs,
      links: { publicBaseUrl: deps.config.server.publicBaseUrl, trustProxy: deps.config.server.trustProxy },
      status: deps.web?.status,
      timeZone: deps.web?.timeZone,
      notifyTargets: deps.config.notify?.urls ?? undefined,
      // Thumbnails of mirrored media come from the mirror itself, as of the served run; while the
      // media folder is missing, from the upstream's URLs again rather than /media/ paths that cannot answer.
      // A "before" side names bytes the served run no longer lists: the newest held copy, else none.
      media:
        deps.web?.media ??
        (servedMedia
          ? mirroredMedia(
              (url) => servedMedia.path(url),
              (url, sha256) => servedMedia.heldPath(url, sha256),
            )
          : undefined),
    }),
];

function probeTimeoutOf(deps: ServerDeps): number {
  return deps.config.database?.probeTimeoutMs ?? defaultDeadlines().probeTimeoutMs;
}

/** The listening address, read once it exists: `server.address()` is a system call per request. */
function boundAddressOf(server: () => Server | undefined): () => { name: string; port: string } | null {
  let bound: { name: string; port: string } | null = null;
  return () => {
    if (bound !== null) return bound;
    const address = server()?.address();
    if (!address || typeof address === 'string') return null;
    return (bound = { name: address.address, port: String(address.port) });
  };
}

/**
 * The Fastify app and its route table. The server factory gets the table's lookup: the front router
 * hands Fastify exactly the paths its routes answer (one route table, never a list beside it).
 */
function createApp(
  logger: Logger,
  metrics: Metrics,
  serverFactory: (
    handler: (req: IncomingMessage, res: ServerResponse) => void,
    isAppPath: (path: string) => boolean,
  ) => Server,
  notFound: (req: IncomingMessage, res: ServerResponse) => void,
): { app: FastifyInstance; routes: RouteTable } {
  const routes = createRouteTable();
  // Typed as Fastify's base logger so the instance keeps Fastify's default generics.
  const loggerInstance: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance,
    // Per-request lines would drown the log at thousands of requests/s; /metrics counts them.
    logController: new LogController({ disableRequestLogging: true }),
    serverFactory: (handler) => serverFactory(handler, routes.has),
    // The node:http server's own listener answers every parser refusal (http-server.ts); Fastify's
    // default would destroy a socket that listener is still writing a raw answer to.
    clientErrorHandler: () => undefined,
  });
  // Entries keep the upstream's number texts (`100.0`, `9007199254740993`): JSON.stringify cannot
  // write them, the project's own writer can, for every JSON answer alike.
  app.setReplySerializer((payload) => stringifyJson(payload));
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
  registerErrorHandlers(app, notFound);
  routes.collectFrom(app);
  return { app, routes };
}

/**
 * Builds the HTTP service without listening. The DRF list endpoint is answered straight from
 * node:http with precomputed buffers (it is the hot path and must match DRF byte for byte); the
 * history API, health and metrics go through Fastify.
 */
export async function buildServer(deps: ServerDeps): Promise<MirrorServer> {
  const logger = deps.logger.child({ module: 'http' });
  const snapshots = new SnapshotHolder(deps.store, logger, deps.config.server.asOfCacheBytes);
  await snapshots.refresh();
  const metrics = createMetrics(deps.store, snapshots, probeTimeoutOf(deps));
  let server: Server | undefined;
  const boundAddress = boundAddressOf(() => server);
  const { media } = deps.config;
  const drf = createDrfHandler({
    snapshots,
    metrics,
    logger,
    options: deps.config.server,
    boundAddress,
    ...(media?.rewrite ? { rewriteMedia: createMediaRewriter(deps.store, deps.config.server) } : {}),
  });
  const mediaFiles = media && createMediaHandler({ store: deps.store, dir: media.dir, metrics, logger });
  const stopSweep = sweepDroppedBlobs(media?.dir ?? null, deps.store, logger);
  const servedMedia = media && new ServedMedia(deps.store, media.dir, () => snapshots.info?.runId ?? null);
  const { app, routes } = createApp(
    logger,
    metrics,
    (handler, isAppPath) =>
      (server = createHttpServer(deps.config.server, drf, handler, {
        ...(mediaFiles ? { media: mediaFiles } : {}),
        isAppPath,
      })),
    drf,
  );
  if (servedMedia) await keepMediaFresh(app, servedMedia, logger);
  for (const register of ROUTES) register(app, { deps, snapshots, metrics, servedMedia });
  await app.ready();
  const httpServer = server ?? app.server;
  return {
    app,
    routes,
    server: httpServer,
    snapshots,
    metrics,
    async listen(port, host) {
      await listenOrExplain(app, port, host);
      snapshots.startPolling(deps.config.server.snapshotPollMs);
      const address = httpServer.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${shownHost}:${address.port}`;
    },
    async close() {
      snapshots.stopPolling();
      await stopSweep();
      await closeWithGrace(app, httpServer, logger, deps.closeGraceMs ?? CLOSE_GRACE_MS);
    },
  };
}

/**
 * Fastify closes idle connections at once, but one still being answered waits for its client: a
 * client that stopped reading a large body would hold the shutdown forever. After a grace, such
 * connections are cut.
 */
async function closeWithGrace(
  app: FastifyInstance,
  httpServer: Server,
  logger: Logger,
  graceMs: number,
): Promise<void> {
  const cut = setTimeout(() => {
    logger.warn({ graceMs }, 'answers still in flight at the end of the close grace: connections cut');
    httpServer.closeAllConnections();
  }, graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}

/**
 * Pages look media up synchronously, per image: the served run's facts are read before each
 * request. When the store cannot answer, the previous run's facts serve (a page still renders).
 */
async function keepMediaFresh(app: FastifyInstance, servedMedia: ServedMedia, logger: Logger): Promise<void> {
  await servedMedia.ready();
  app.addHook('preHandler', async () => {
    await servedMedia.ready().catch((err: unknown) => {
      logger.warn({ err }, 'media facts of the served run could not be read; using the previous ones');
    });
  });
}

const HOST_UNKNOWN = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAFNOSUPPORT', 'EINVAL']);

async function listenOrExplain(app: FastifyInstance, port: number, host: string): Promise<void> {
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
    // A HOST that names no address (a typo, a name the resolver does not know) is a setting to fix.
    if (code !== undefined && HOST_UNKNOWN.has(code)) {
      throw new ConfigError([
        {
          name: 'HOST',
          problem:
            `cannot listen on ${JSON.stringify(host)} (${code}): it is not an address of this machine; ` +
            'use an IP address such as 127.0.0.1, 0.0.0.0 or ::, or a name that resolves to one',
        },
      ]);
    }
    throw error;
  }
}
