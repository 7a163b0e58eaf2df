import type { Config } from './config/load-config.js';
import { notificationRowsOf, openStore, type OpenedStore } from './db/open-store.js';
import type { Store } from './db/store.js';
import { outboxOver } from './notify/outbox.js';
import { startNotifyChannel } from './notify/channel.js';
import { OutboxWorker } from './outbox/worker.js';
import type { OutboxChannel } from './outbox/channel.js';
import { DEMO_DATABASE_PATH, DEMO_UPSTREAM_LABEL, startDemo, type Demo } from './demo/start-demo.js';
import { EXIT } from './cli/exit-codes.js';
import { buildServer, type MirrorServer } from './http/server.js';
import { createLogger, type Logger } from './logger.js';
import { checkUpstreamBinding } from './sync/upstream-binding.js';
import { recoverCrashedRuns } from './sync/run-lock.js';
import { runIsolatedSync, type IsolatedSyncOptions } from './sync/isolated-sync.js';
import { createScheduler, validateCron, type Scheduler } from './sync/scheduler.js';
import { syncEnvFrom, type ChildSyncConfig } from './sync/child-env.js';
import type { LogFormat } from './sync/child-output.js';
import { ConfigError } from './errors.js';
import { startWebhookChannel } from './webhooks/service.js';
import { nextCronRun } from './sync/next-cron-run.js';
import { logStartupRun, startupRun } from './sync/startup-run.js';
import { maskUrlCredentials } from './config/upstream-target.js';
import type { StatusSource } from './web/status-source.js';
import { mediaFolderOf } from './config/media-dir.js';
import { claimAtStart } from './media/claim-folder.js';
import { isMirrorError } from './errors.js';
import {
  connectWhenBack,
  openServerStore,
  type LocalStartPlace,
  type ServerStore,
} from './http/local-start.js';
import type { LocalSnapshot } from './http/local-snapshot-file.js';

/** What `start` tells the status page: the mode, the masked upstream, the schedule. */
export function statusSourceFor(
  config: Pick<Config, 'upstream' | 'sync'>,
  upstreamLabel: string,
  scheduler: Scheduler,
): StatusSource {
  return {
    upstream: () => ({
      mode: config.upstream.target ? 'upstream' : 'demo',
      url: maskUrlCredentials(upstreamLabel),
    }),
    nextRunAt: () => nextCronRun(config.sync.cron),
    randomDelayMs: config.sync.randomDelayMs,
    syncRunning: () => scheduler.running,
  };
}

/** Graceful shutdown must end within this, whatever a run in flight is doing. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Lines for a person on a terminal, JSON for a log collector; a sync child of `start` follows suit. */
function logFormat(): LogFormat {
  return process.stdout.isTTY === true ? 'pretty' : 'json';
}

function loggerFor(config: Config): Logger {
  return createLogger({ level: config.log.level, pretty: logFormat() === 'pretty' });
}

/** Options of `start` that are not settings. */
export interface StartOptions {
  /** Let this run move the database to another upstream (recorded on the run). */
  rebind: boolean;
}

interface ShutdownSignal {
  /** Resolves on the first SIGINT/SIGTERM. */
  received: Promise<NodeJS.Signals>;
  dispose(): void;
}

/**
 * Listens from the very start, so a signal during start-up still ends in an orderly exit 0, and
 * keeps listening while shutting down, so a second signal is logged instead of killing the process.
 */
function listenForShutdown(logger: Logger): ShutdownSignal {
  let first: NodeJS.Signals | null = null;
  let resolve: (signal: NodeJS.Signals) => void = () => undefined;
  const received = new Promise<NodeJS.Signals>((r) => (resolve = r));
  const onSignal = (signal: NodeJS.Signals) => {
    if (first) {
      logger.warn({ signal }, 'already shutting down; it ends within the grace period');
      return;
    }
    first = signal;
    logger.info({ signal }, 'shutting down');
    resolve(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    received,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** `serve`: the HTTP service alone, reading what `sync` (any process) writes. */
export async function runServeCommand(config: Config): Promise<number> {
  const logger = loggerFor(config);
  const signal = listenForShutdown(logger);
  const storeOptions = { existing: true, purpose: 'server' } as const;
  let opened: ServerStore;
  let server: MirrorServer;
  try {
    opened = await openServerStore(config.database, storeOptions, localPlaceOf(config, config.media), logger);
  } catch (error) {
    signal.dispose();
    throw error;
  }
  const store = storeOf(opened);
  try {
    if (opened.kind === 'open') await claimServedFolder(config.media, store, logger);
    server = await buildServer({ store, logger, config, ...localSnapshotOf(opened) });
    const url = await server.listen(config.server.port, config.server.host);
    logger.info({ url, ...internalUrlOf(server), db: config.database.target.label }, 'serving the mirror');
  } catch (error) {
    await store.close();
    signal.dispose();
    throw error;
  }
  const stopWaiting = new AbortController();
  const background =
    opened.kind === 'away'
      ? connectWhenBack(config.database, storeOptions, opened.waiting, {
          logger,
          signal: stopWaiting.signal,
          complete: async (real) => {
            await claimServedFolder(config.media, real, logger);
            // The server's commit watch is told at once: the newest run replaces the local snapshot.
            opened.waiting.connect(real);
          },
        })
      : null;
  const failed = await untilSignalOrFailure(signal, background);
  stopWaiting.abort();
  await background?.catch(() => undefined);
  await server.close();
  await store.close();
  signal.dispose();
  if (failed !== null) throw failed.error;
  return EXIT.ok;
}

/** The store every part of a server uses: the real one, or the one standing in for it until it answers. */
function storeOf(opened: ServerStore): OpenedStore {
  return opened.kind === 'open' ? opened.store : opened.waiting.store;
}

/** The local snapshot a server built without its database serves. */
function localSnapshotOf(opened: ServerStore): { localSnapshot?: LocalSnapshot } {
  return opened.kind === 'away' ? { localSnapshot: opened.local } : {};
}

function localPlaceOf(config: Config, media: Config['media']): LocalStartPlace {
  return { mediaDir: media.dir, maxListingBytes: config.sync.maxListingBytes };
}

/**
 * Waits for the first signal, or for the background start-up to fail (a foreign upstream found once
 * the database answered, say): that failure ends the process as a failed start would.
 */
async function untilSignalOrFailure(
  signal: ShutdownSignal,
  background: Promise<void> | null,
): Promise<{ error: unknown } | null> {
  const failure =
    background === null
      ? new Promise<never>(() => undefined)
      : background.then(
          () => new Promise<never>(() => undefined),
          (error: unknown) => ({ error }),
        );
  return Promise.race([signal.received.then(() => null), failure]);
}

/**
 * `serve` claims the media folder when there are files to serve (linking them in from the legacy
 * folder on an upgrade). It may run on a read-only disk: a folder it cannot write is said, and
 * served as it is; a folder of another database stops it.
 */
async function claimServedFolder(media: Config['media'], store: Store, logger: Logger): Promise<void> {
  if (!(await store.hasStoredMedia())) return;
  try {
    await claimAtStart(media, store, logger);
  } catch (error) {
    if (isMirrorError(error)) throw error;
    logger.warn(
      { err: error, dir: media.dir },
      'media folder not claimed (cannot write it?); served as it is',
    );
  }
}

/**
 * `start`, the main job: config → logger → db → migrate → server → scheduler. Syncs at once when the
 * mirror is empty or stale; SIGTERM/SIGINT stop accepting connections, abort a run in flight (it is
 * recorded as aborted, nothing partial stored), close the database and exit 0.
 */
export async function runStartCommand(
  config: Config,
  options: StartOptions = { rebind: false },
): Promise<number> {
  refuseAccidentalDemo(config);
  if (!validateCron(config.sync.cron)) {
    throw new ConfigError([
      {
        name: 'SYNC_CRON',
        problem: `not a valid cron expression: ${JSON.stringify(config.sync.cron)} (e.g. "*/10 * * * *")`,
      },
    ]);
  }
  const demo = config.upstream.target === null;
  // Every line of a demo says so, so a demo mistaken for production shows in any log search.
  const logger = demo ? loggerFor(config).child({ mode: 'demo' }) : loggerFor(config);
  const signal = listenForShutdown(logger);
  const parts: Partial<Parts> = {};
  try {
    await startParts(config, options, logger, parts);
  } catch (error) {
    // A failed start-up (a port in use, say) must not leave the demo upstream or the db open.
    await shutdown(parts);
    signal.dispose();
    throw error;
  }
  const failed = await untilSignalOrFailure(signal, parts.background ?? null);
  await shutdown(parts);
  signal.dispose();
  if (failed !== null) throw failed.error;
  return EXIT.ok;
}

interface Parts {
  demo: Demo | null;
  store: OpenedStore;
  server: MirrorServer;
  scheduler: Scheduler;
  /** The outbox worker: webhook deliveries and notifications, on a store of its own. */
  delivery: Delivery | null;
  /** The rest of a start-up begun without its database, under way until it answers. */
  background: Promise<void>;
  stopWaiting: AbortController;
}

/**
 * The demo is for trying the mirror out; in production (the Docker image) a missing UPSTREAM_URL is
 * far more likely a mistake than a wish to serve invented coworkers, so it must be asked for.
 */
function refuseAccidentalDemo(config: Config): void {
  if (config.upstream.target !== null || config.demo.enabled || !config.production) return;
  throw new ConfigError([
    {
      name: 'UPSTREAM_URL',
      problem:
        'not set, and NODE_ENV=production: set UPSTREAM_URL to the site to mirror (e.g. https://example.com), ' +
        'or DEMO=1 to run the demo on purpose',
    },
  ]);
}

/** The media settings of a start: the demo's database has a media folder of its own too, unless MEDIA_DIR names one. */
function mediaOfStart(config: Config, database: ReturnType<typeof databaseOfStart>): Config['media'] {
  return {
    ...config.media,
    ...mediaFolderOf(database.target, config.explicit.has('media.dir') ? config.media.dir : null),
  };
}

/** Starts each part in order, recording it in `parts` as soon as it runs, so a failure can undo it. */
async function startParts(
  config: Config,
  options: StartOptions,
  logger: Logger,
  parts: Partial<Parts>,
): Promise<void> {
  const demo = config.upstream.target === null;
  const database = databaseOfStart(config);
  const media = mediaOfStart(config, database);
  const storeOptions = { logger, purpose: 'server' } as const;
  // The demo's database is its own SQLite file: nothing to wait for.
  const opened: ServerStore = demo
    ? { kind: 'open', store: await openStore(database, storeOptions) }
    : await openServerStore(database, storeOptions, localPlaceOf(config, media), logger);
  const store = (parts.store = storeOf(opened));
  const label = config.upstream.target?.label ?? DEMO_UPSTREAM_LABEL;
  const checks = (on: Store) => checksAtStart(config, options, { store: on, media, demo, label, logger });
  if (opened.kind === 'open') await checks(store);
  parts.demo = demo ? await demoOfStart(config, store, logger, parts) : null;
  const child = childSync({ ...config, media }, database, parts.demo);
  const scheduler = (parts.scheduler = scheduledSyncs(
    config,
    () => isolatedSync(config, options, child, store, logger),
    { store, logger, parts },
  ));
  const server = (parts.server = await buildServer({
    store,
    logger,
    config: { ...config, media },
    syncTrigger: () => scheduler.trigger({ trigger: 'admin', scheduledFor: null }),
    web: { status: statusSourceFor(config, demo ? child.config.upstream.target.url : label, scheduler) },
    ...localSnapshotOf(opened),
  }));
  const following = () => startFollowing(config, { database, store, server, logger, parts });
  if (opened.kind === 'open') await following();
  const url = await server.listen(config.server.port, config.server.host);
  announceStart(logger, {
    url,
    ...internalUrlOf(server),
    upstream: label,
    db: database.target.label,
    cron: config.sync.cron,
    demo,
  });
  const schedule = async () => {
    scheduler.start();
    await startupSync(scheduler, store, config, logger);
  };
  if (opened.kind === 'open') return schedule();
  // The rest of the start-up waits for the database; meanwhile the local snapshot is served.
  const stop = (parts.stopWaiting = new AbortController());
  parts.background = connectWhenBack(database, storeOptions, opened.waiting, {
    logger,
    signal: stop.signal,
    complete: async (real) => {
      await checks(real);
      // The server's commit watch is told at once: the newest run replaces the local snapshot.
      opened.waiting.connect(real);
      await following();
      await schedule();
    },
  });
}

/** The demo's simulated upstream, its syncs asked of the scheduler. */
function demoOfStart(config: Config, store: Store, logger: Logger, parts: Partial<Parts>): Promise<Demo> {
  return startDemo(
    config,
    store,
    logger,
    () => void parts.scheduler?.trigger({ trigger: 'demo', scheduledFor: null }),
    () => parts.scheduler?.running === true,
  );
}

/**
 * What `start` asks of the database before it syncs or claims anything: the upstream it is bound to,
 * the runs a crash left behind, and the media folder's owner.
 */
async function checksAtStart(
  config: Config,
  options: StartOptions,
  deps: { store: Store; media: Config['media']; demo: boolean; label: string; logger: Logger },
): Promise<void> {
  const { store } = deps;
  // Refuse another upstream at once (exit 2), before serving; each sync child checks again and
  // records a rebind on its run.
  await checkUpstreamBinding(store, deps.label, options);
  await recoverCrashedRuns(store);
  // Likewise a media folder of another database (exit 2); an upgrade's files are linked in first.
  if (deps.demo || config.media.origins !== null || (await store.hasStoredMedia())) {
    await claimAtStart(deps.media, store, deps.logger);
  }
}

/** The workers that follow the database's outboxes: webhook deliveries and notifications. */
async function startFollowing(
  config: Config,
  deps: {
    database: Config['database'];
    store: Store;
    server: MirrorServer;
    logger: Logger;
    parts: Partial<Parts>;
  },
): Promise<void> {
  // The outbox is in the database this start writes (the demo's own, unless DATABASE_PATH is set).
  deps.parts.delivery = await startDelivery(config, deps);
}

/**
 * The scheduler of `start`: each run a sync child told what started it, each tick asked of the store
 * before a child is spawned for it.
 */
function scheduledSyncs(
  config: Config,
  sync: () => Omit<IsolatedSyncOptions, 'start'>,
  deps: { store: Store; logger: Logger; parts: Partial<Parts> },
): Scheduler {
  return createScheduler({
    cronExpression: config.sync.cron,
    randomDelayMs: config.sync.randomDelayMs,
    logger: deps.logger.child({ module: 'scheduler' }),
    run: (abort, onRunStarted, start) =>
      runIsolatedSync({ ...sync(), start }, abort, onRunStarted).then(() =>
        deps.parts.server?.snapshots.refreshInBackground(),
      ),
    runOfTick: (tick) => deps.store.runOfTick(tick),
  });
}

/** The internal listener's URL as a log field, when INTERNAL_PORT splits the server. */
function internalUrlOf(server: MirrorServer): { internalUrl?: string } {
  const internalUrl = server.internalUrl();
  return internalUrl === null ? {} : { internalUrl };
}

interface StartFacts {
  url: string;
  /** Where the pages, history and /metrics answer when INTERNAL_PORT is set. */
  internalUrl?: string;
  upstream: string;
  db: string;
  cron: string;
  demo: boolean;
}

/**
 * Where `start` answers. On a terminal (stderr a TTY) a person reads one plain line, and the record
 * drops to debug so it is not said twice; elsewhere the JSON record stays as log collectors expect it.
 */
function announceStart(logger: Logger, facts: StartFacts): void {
  const { demo, ...fields } = facts;
  const record = { ...fields, ...(demo ? { demo: true } : {}) };
  if (process.stderr.isTTY !== true) {
    logger.info(record, 'coworker-mirror started');
    return;
  }
  logger.debug(record, 'coworker-mirror started');
  // Settings a person typed may hold control characters; a terminal must not act on them.
  const plain = (text: string) => text.replace(/\p{Cc}/gu, '?');
  const what = demo ? 'the demo (the data is invented)' : `a mirror of ${plain(facts.upstream)}`;
  const pages =
    facts.internalUrl === undefined ? '' : ` (pages, history and /metrics: ${facts.internalUrl}/)`;
  process.stderr.write(`coworker-mirror: serving ${facts.url}/${pages} — ${what}, db ${plain(facts.db)}\n`);
}

/**
 * The store `start` uses. The demo keeps its own history (its invented coworkers must never land in
 * the real mirror's) unless a database was named on purpose.
 */
function databaseOfStart(config: Config): Config['database'] {
  const named = config.explicit.has('database.path') || config.explicit.has('database.url');
  if (config.upstream.target !== null || named) return config.database;
  const target = { kind: 'sqlite', path: DEMO_DATABASE_PATH, label: DEMO_DATABASE_PATH } as const;
  return { ...config.database, path: DEMO_DATABASE_PATH, target };
}

interface Delivery {
  stop(): Promise<void>;
}

/**
 * The one outbox worker of `start`, serving each channel configured, on a store of its own: on
 * SQLite, PRAGMA data_version then sees every commit of the others, the in-process sync and a sync
 * in another process alike. Null when neither WEBHOOK_URLS nor NOTIFY_URLS names a target.
 */
async function startDelivery(
  config: Config,
  deps: { database: Config['database']; server: MirrorServer; logger: Logger },
): Promise<Delivery | null> {
  const notifying = (config.notify.urls ?? []).length > 0;
  if (config.webhooks.urls.length === 0 && !notifying) return null;
  // In the server's process: its waits for SQLite's write lock hold every answer, as the server's own do.
  const store = await openStore(deps.database, { purpose: 'server' });
  const channels: OutboxChannel[] = [];
  const webhooks = startWebhookChannel({
    config,
    store,
    logger: deps.logger,
    registry: deps.server.metrics.registry,
  });
  if (webhooks) channels.push(webhooks);
  const notify = notifying ? notifyChannelOf(config, store, deps.logger) : null;
  if (notify) channels.push(notify);
  if (channels.length === 0) {
    await store.close();
    return null;
  }
  const worker = new OutboxWorker({ channels, logger: deps.logger.child({ module: 'outbox' }), store });
  worker.start();
  return {
    async stop() {
      await worker.stop();
      await store.close();
    },
  };
}

/** The notification channel, where the store has a notification outbox. */
function notifyChannelOf(config: Config, store: Store, logger: Logger): OutboxChannel | null {
  const rows = notificationRowsOf(store);
  if (rows === null) {
    logger.warn({ db: store.file }, 'notifications are not sent from this store yet; NOTIFY_URLS ignored');
    return null;
  }
  return startNotifyChannel(config, outboxOver(rows), store);
}

/** What a child sync needs that `start` alone knows: the demo's upstream and media, the db chosen. */
interface ChildSync {
  demo: boolean;
  /** The configuration the sync runs with: the demo's upstream, database and media host in place. */
  config: ChildSyncConfig;
}

function childSync(config: Config, database: Config['database'], demo: Demo | null): ChildSync {
  const target = config.upstream.target ?? {
    url: demo?.upstream.url ?? '',
    label: DEMO_UPSTREAM_LABEL,
    headers: {},
  };
  // The demo mirrors its own media host unless MEDIA_ORIGINS names others.
  const demoMedia = demo && config.media.origins === null ? [demo.media.url] : null;
  return {
    demo: demo !== null,
    config: {
      ...config,
      upstream: { ...config.upstream, target },
      database,
      media: demoMedia ? { ...config.media, origins: demoMedia } : config.media,
    },
  };
}

/** Each sync of `start` runs as this very CLI's `sync` in a child process, off the server's heap. */
function isolatedSync(
  config: Config,
  options: StartOptions,
  child: ChildSync,
  store: Store,
  logger: Logger,
): Omit<IsolatedSyncOptions, 'start'> {
  return {
    execPath: process.execPath,
    nodeArgs: process.execArgv,
    cliPath: process.argv[1] ?? '',
    // The child checks the binding itself: it rebinds when `start` was asked to, and records the
    // demo under the demo's label, as this process would.
    syncArgs: [
      '--for-start',
      ...(options.rebind ? ['--rebind'] : []),
      ...(child.demo ? ['--upstream-label', child.config.upstream.target.label] : []),
    ],
    env: { ...process.env, ...syncEnvFrom(child.config) },
    maxHeapMb: config.sync.maxHeapMb,
    maxDurationMs: config.sync.maxDurationMs,
    store,
    upstream: child.config.upstream.target.label,
    logger: logger.child({ module: 'isolated-sync' }),
    logFormat: logFormat(),
    stdout: process.stdout,
    stderr: process.stderr,
  };
}

/** Syncs at once when a tick was missed while no instance ran, or the mirror is empty or stale. */
async function startupSync(
  scheduler: Scheduler,
  store: Store,
  config: Config,
  logger: Logger,
): Promise<void> {
  const run = await startupRun({
    cronExpression: config.sync.cron,
    now: new Date(),
    staleAfterMs: config.server.staleAfterMs,
    store,
  }).catch((error: unknown) => {
    // The database away at start-up: the schedule goes on, and its next tick syncs.
    logger.warn({ err: error }, 'could not tell whether to sync at start-up; the schedule goes on');
    return null;
  });
  if (run === null) return;
  logStartupRun(logger, run);
  void scheduler.trigger(run.start);
}

async function shutdown(parts: Partial<Parts>): Promise<void> {
  parts.stopWaiting?.abort();
  await parts.background?.catch(() => undefined);
  // Stop accepting first, so no client sees a half-closed service, then settle the run.
  const closing = parts.server?.close();
  await parts.scheduler?.stop(SHUTDOWN_GRACE_MS);
  await closing;
  await parts.delivery?.stop();
  await parts.store?.close();
  await parts.demo?.stop();
}
