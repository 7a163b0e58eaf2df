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
import { createDrfHandler, type DrfHandler } from './drf-handler.js';
import { registerErrorHandlers } from './error-handler.js';
import { createHttpServer, type HttpServerExtras } from './http-server.js';
import { createMediaHandler } from './media-route.js';
import { sweepDroppedBlobs } from '../media/blob-cache.js';
import { createMediaRewriter } from './media-rewrite.js';
import { createMetrics, type Metrics } from './metrics.js';
import { registerOpsRoutes } from './ops-routes.js';
import { createRouteTable, type RouteTable } from './route-table.js';
import { SnapshotHolder } from './snapshot-holder.js';
import { LocalSnapshotKeeper, localSnapshotMaxBytes } from './local-snapshot-keeper.js';
import type { LocalSnapshot } from './local-snapshot-file.js';
import { defaultOf } from '../config/settings.js';
import { mirroredMedia } from '../web/media-source.js';
import { ServedMedia } from './served-media.js';
import { MediaAudit } from './media-audit.js';
import { registerWeb, type WebDeps } from '../web/register.js';
import type { LinkBase } from '../request/params.js';
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
    media?: Pick<MediaConfig, 'dir' | 'rewrite'> & Partial<Pick<MediaConfig, 'ownDir' | 'legacyDir'>>;
    notify?: { urls: readonly NotifyTarget[] | null };
    webhooks?: { urls: readonly string[] };
    /** DATABASE_PROBE_TIMEOUT: the deadline of /readyz's and /metrics' database reads (its default unless given). */
    database?: Pick<DatabaseDeadlines, 'probeTimeoutMs'>;
    /** SYNC_MAX_LISTING_BYTES: it bounds the local snapshot (its default unless given). */
    sync?: { maxListingBytes: number };
  };
  /**
   * The local snapshot to serve until the store answers (a start without its database): held
   * instead of read from the store. Without it the store's newest run is read at once.
   */
  localSnapshot?: LocalSnapshot;
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
  /** The listener of PORT: every path, or with INTERNAL_PORT set only what a website needs. */
  server: Server;
  /** The listener of INTERNAL_PORT, answering every path; null when PORT serves everything. */
  internalServer: Server | null;
  snapshots: SnapshotHolder;
  metrics: Metrics;
  /**
   * Listens (on INTERNAL_HOST:INTERNAL_PORT too, when set) and returns the base URL of `port`,
   * e.g. http://127.0.0.1:8000.
   */
  listen(port: number, host: string): Promise<string>;
  /** The internal listener's base URL once it listens; null without INTERNAL_PORT. */
  internalUrl(): string | null;
  close(): Promise<void>;
}

/** What a route registrar gets: everything the server built, nothing it starts. */
export interface RouteContext {
  deps: ServerDeps;
  snapshots: SnapshotHolder;
  metrics: Metrics;
  /** The mirrored media as of the served run, when media is served. */
  servedMedia: ServedMedia | undefined;
  /** How the history API, pages and feeds name this service in their absolute links. */
  links: LinkBase;
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
  (app, { deps, links }) => registerHistoryRoutes(app, deps.store, links),
  (app, { deps }) => registerExportRoutes(app, deps.store),
  (app, { deps }) => {
    if (deps.config.server.adminToken && deps.syncTrigger) {
      registerAdminSyncRoute(app, deps.config.server.adminToken, deps.syncTrigger);
    }
  },
  (app, { deps, metrics, links }) =>
    registerDeliveryRoutes(app, deps.store, {
      ...deps.config.server,
      ...links,
      registry: metrics.registry,
      probeTimeoutMs: probeTimeoutOf(deps),
      ...(deps.config.webhooks ? { webhookUrls: deps.config.webhooks.urls } : {}),
    }),
  (app, { deps, snapshots, servedMedia, links }) =>
    registerWeb(app, {
      store: deps.store,
      logger: deps.logger.child({ module: 'http' }),
      served: () => snapshots.info,
      staleAfterMs: deps.config.server.staleAfterMs,
      links,
      status: deps.web?.status,
      timeZone: deps.web?.timeZone,
      notifyTargets: deps.config.notify?.urls ?? undefined,
      ...(servedMedia ? { mediaProblem: () => servedMedia.problem() } : {}),
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
 * The Fastify app and its route table. The server factory gets the table: the front router hands
 * Fastify exactly the paths its routes answer (one route table, never a list beside it).
 */
function createApp(
  logger: Logger,
  metrics: Metrics,
  serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void, routes: RouteTable) => Server,
  notFound: (req: IncomingMessage, res: ServerResponse) => void,
): { app: FastifyInstance; routes: RouteTable } {
  const routes = createRouteTable();
  // Typed as Fastify's base logger so the instance keeps Fastify's default generics.
  const loggerInstance: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance,
    // Per-request lines would drown the log at thousands of requests/s; /metrics counts them.
    logController: new LogController({ disableRequestLogging: true }),
    serverFactory: (handler) => serverFactory(handler, routes),
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
 * How the history API, pages and feeds name the service in absolute links. PUBLIC_BASE_URL names
 * the public listener: with INTERNAL_PORT set they answer only on the internal one, and name the
 * address the request came to (its Host, or a trusted proxy's X-Forwarded-Host).
 */
function linkBaseOf(server: ServerConfig): LinkBase {
  return {
    publicBaseUrl: server.internalPort === null ? server.publicBaseUrl : null,
    trustProxy: server.trustProxy,
  };
}

/**
 * Builds the HTTP service without listening. The DRF list endpoint is answered straight from
 * node:http with precomputed buffers (it is the hot path and must match DRF byte for byte); the
 * history API, health and metrics go through Fastify. With INTERNAL_PORT set, one app answers on
 * two listeners: PORT's front router hands Fastify its public routes only (every other path gets
 * DRF's 404, as an unknown path does), INTERNAL_PORT's hands it every route.
 */
export async function buildServer(deps: ServerDeps): Promise<MirrorServer> {
  const logger = deps.logger.child({ module: 'http' });
  const options = deps.config.server;
  const snapshots = new SnapshotHolder(deps.store, logger, options.asOfCacheBytes);
  const keeper = localSnapshotKeeper(deps, logger);
  if (keeper) snapshots.onSwap((prepared, info) => keeper.save(prepared, info));
  if (deps.localSnapshot) {
    snapshots.hold(deps.localSnapshot.prepared, { ...deps.localSnapshot.run });
  } else {
    await snapshots.refresh();
  }
  const metrics = createMetrics(deps.store, snapshots, probeTimeoutOf(deps));
  // Set by Fastify's server factory, which runs while the app is built.
  const built: Listeners = { server: undefined, internal: null };
  const drf = createDrfHandler({
    snapshots,
    metrics,
    logger,
    options,
    boundAddress: boundAddressOf(() => built.server),
    ...(deps.config.media?.rewrite ? { rewriteMedia: createMediaRewriter(deps.store, options) } : {}),
  });
  const { media } = deps.config;
  const audit = media && new MediaAudit(deps.store, media.dir, logger);
  const mediaFiles =
    media &&
    createMediaHandler({ store: deps.store, folder: media, metrics, logger, ...(audit ? { audit } : {}) });
  const stopSweep = sweepDroppedBlobs(media?.dir ?? null, deps.store, logger);
  const servedMedia =
    media && audit && new ServedMedia(deps.store, media.dir, () => snapshots.info?.runId ?? null, audit);
  const { app, routes } = createApp(logger, metrics, listenerFactory(options, drf, mediaFiles, built), drf);
  if (servedMedia) await keepMediaFresh(app, servedMedia, logger, deps.localSnapshot !== undefined);
  const links = linkBaseOf(options);
  for (const register of ROUTES) register(app, { deps, snapshots, metrics, servedMedia, links });
  await app.ready();
  const httpServer = built.server ?? app.server;
  const { internal } = built;
  return {
    app,
    routes,
    server: httpServer,
    internalServer: internal,
    snapshots,
    metrics,
    async listen(port, host) {
      await listenBoth(app, internal, { port, host }, options);
      snapshots.startPolling(options.snapshotPollMs);
      audit?.start();
      return baseUrlOf(httpServer);
    },
    internalUrl: () => (internal?.listening === true ? baseUrlOf(internal) : null),
    async close() {
      snapshots.stopPolling();
      await keeper?.idle();
      await audit?.stop();
      await stopSweep();
      await closeWithGrace(app, httpServer, internal, logger, deps.closeGraceMs ?? CLOSE_GRACE_MS);
    },
  };
}

/**
 * The writer of the local snapshot, in the media folder (on by default wherever media is served
 * from a folder), so a restart without the database has the last served snapshot to serve.
 */
function localSnapshotKeeper(deps: ServerDeps, logger: Logger): LocalSnapshotKeeper | null {
  const { media } = deps.config;
  if (!media) return null;
  const maxListingBytes = deps.config.sync?.maxListingBytes ?? defaultOf('sync', 'maxListingBytes');
  return new LocalSnapshotKeeper({
    store: deps.store,
    folder: media,
    logger: logger.child({ module: 'local-snapshot' }),
    maxBytes: localSnapshotMaxBytes(maxListingBytes),
  });
}

/** The node:http servers in front of the app: PORT's, and INTERNAL_PORT's when set. */
interface Listeners {
  server: Server | undefined;
  internal: Server | null;
}

/**
 * Fastify's server factory: PORT's listener, and INTERNAL_PORT's beside it when set, both over the
 * app's handler and the DRF site, each with its own address for links without Host.
 */
function listenerFactory(
  options: ServerConfig,
  drf: DrfHandler,
  media: HttpServerExtras['media'],
  built: Listeners,
): (handler: (req: IncomingMessage, res: ServerResponse) => void, routes: RouteTable) => Server {
  return (handler, routes) => {
    const mediaExtra = media ? { media } : {};
    const split = options.internalPort !== null;
    if (split) {
      const internalDrf = drf.on(boundAddressOf(() => built.internal ?? undefined));
      built.internal = createHttpServer(options, internalDrf, handler, {
        ...mediaExtra,
        isAppPath: routes.has,
      });
    }
    return (built.server = createHttpServer(options, drf, handler, {
      ...mediaExtra,
      isAppPath: split ? routes.isPublic : routes.has,
    }));
  };
}

/** Listens on INTERNAL_PORT first, then PORT: when either cannot listen, nothing is left listening. */
async function listenBoth(
  app: FastifyInstance,
  internal: Server | null,
  { port, host }: { port: number; host: string },
  options: ServerConfig,
): Promise<void> {
  if (internal !== null) await listenInternal(internal, options);
  try {
    await listenOrExplain(() => app.listen({ port, host }), port, host, PUBLIC_NAMES);
  } catch (error) {
    if (internal !== null) await closeListener(internal);
    throw error;
  }
}

/** http://host:port of a listening server, an IPv6 address in brackets. */
function baseUrlOf(server: Server): string {
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${shownHost}:${address.port}`;
}

/**
 * Fastify closes idle connections at once, but one still being answered waits for its client: a
 * client that stopped reading a large body would hold the shutdown forever. After a grace, such
 * connections are cut, on both listeners alike.
 */
async function closeWithGrace(
  app: FastifyInstance,
  httpServer: Server,
  internal: Server | null,
  logger: Logger,
  graceMs: number,
): Promise<void> {
  const cut = setTimeout(() => {
    logger.warn({ graceMs }, 'answers still in flight at the end of the close grace: connections cut');
    httpServer.closeAllConnections();
    internal?.closeAllConnections();
  }, graceMs);
  try {
    // Both stop accepting at once; Fastify's routes answer 503 on either from then on.
    await Promise.all([app.close(), internal === null ? undefined : closeListener(internal)]);
  } finally {
    clearTimeout(cut);
  }
}

/** Stops a listener of our own (node:http closes its idle connections at once); done when its last one ends. */
function closeListener(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Pages look media up synchronously, per image: the served run's facts are read before each
 * request. When the store cannot answer, the previous run's facts serve (a page still renders).
 */
async function keepMediaFresh(
  app: FastifyInstance,
  servedMedia: ServedMedia,
  logger: Logger,
  storeAway: boolean,
): Promise<void> {
  // Without the database (a local snapshot served), the facts are read once it answers.
  if (storeAway) {
    await servedMedia.ready().catch(() => undefined);
  } else {
    await servedMedia.ready();
  }
  app.addHook('preHandler', async () => {
    await servedMedia.ready().catch((err: unknown) => {
      logger.warn({ err }, 'media facts of the served run could not be read; using the previous ones');
    });
  });
}

/** The settings a listener's failure names: the one to change, and its address. */
interface ListenerNames {
  port: string;
  host: string;
}

const PUBLIC_NAMES: ListenerNames = { port: 'PORT', host: 'HOST' };
const INTERNAL_NAMES: ListenerNames = { port: 'INTERNAL_PORT', host: 'INTERNAL_HOST' };

async function listenInternal(server: Server, options: ServerConfig): Promise<void> {
  const port = options.internalPort ?? 0;
  const host = options.internalHost;
  await listenOrExplain(
    () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      }),
    port,
    host,
    INTERNAL_NAMES,
  );
}

const HOST_UNKNOWN = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAFNOSUPPORT', 'EINVAL']);

async function listenOrExplain(
  listen: () => Promise<unknown>,
  port: number,
  host: string,
  names: ListenerNames,
): Promise<void> {
  try {
    await listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
      throw new ConfigError([
        {
          name: `${names.port} / ${names.host}`,
          problem: `cannot listen on ${host}:${port} (${code}); choose another ${names.port} or ${names.host}`,
        },
      ]);
    }
    // A host that names no address (a typo, a name the resolver does not know) is a setting to fix.
    if (code !== undefined && HOST_UNKNOWN.has(code)) {
      throw new ConfigError([
        {
          name: names.host,
          problem:
            `cannot listen on ${JSON.stringify(host)} (${code}): it is not an address of this machine; ` +
            'use an IP address such as 127.0.0.1, 0.0.0.0 or ::, or a name that resolves to one',
        },
      ]);
    }
    throw error;
  }
}
