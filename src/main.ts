import type { Config } from './config.js';
import { openDatabase, type MirrorDatabase } from './db/open.js';
import { EXIT } from './exit-codes.js';
import { buildServer, serverOptionsFrom, type MirrorServer } from './http/server.js';
import { createLogger, type Logger } from './logger.js';
import { startSimulatedUpstream, type SimulatedUpstream } from './simulated-upstream/index.js';
import { recoverCrashedRuns } from './sync/run-lock.js';
import { runIsolatedSync, type IsolatedSyncOptions } from './sync/isolated-sync.js';
import { createScheduler, validateCron, type Scheduler } from './sync/scheduler.js';
import { syncEnvFrom } from './sync/settings.js';
import { ConfigError } from './errors.js';

/** Graceful shutdown must end within this, whatever a run in flight is doing. */
const SHUTDOWN_GRACE_MS = 10_000;

function loggerFor(config: Config): Logger {
  return createLogger({ level: config.logLevel, pretty: process.stdout.isTTY === true });
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
  const store = openDatabase(config.databasePath);
  let server: MirrorServer;
  try {
    server = await buildServer({ store, logger, options: serverOptionsFrom(config) });
    const url = await server.listen(config.port, config.host);
    logger.info({ url, db: config.databasePath }, 'serving the mirror');
  } catch (error) {
    store.close();
    signal.dispose();
    throw error;
  }
  await signal.received;
  await server.close();
  store.close();
  signal.dispose();
  return EXIT.ok;
}

interface Demo {
  upstream: SimulatedUpstream;
  timer: NodeJS.Timeout;
}

async function startDemo(config: Config, logger: Logger): Promise<Demo> {
  const upstream = await startSimulatedUpstream({ seed: 1, count: 45, port: config.demoPort });
  const timer = setInterval(() => {
    const change = upstream.data.mutateRandomly();
    logger.info({ demo: true, change }, 'demo upstream changed its data');
  }, config.demoMutateEveryMs);
  timer.unref();
  logger.warn(
    { demoUpstream: upstream.url, mutateEveryMs: config.demoMutateEveryMs },
    'DEMO MODE: no UPSTREAM_URL is set, so this mirrors the built-in simulated upstream, whose invented data ' +
      'changes every few minutes. To mirror a real site: UPSTREAM_URL=https://your-site.example npm start',
  );
  return { upstream, timer };
}

/**
 * `start`, the main job: config → logger → db → migrate → server → scheduler. Syncs at once when the
 * mirror is empty or stale; SIGTERM/SIGINT stop accepting connections, abort a run in flight (it is
 * recorded as aborted, nothing partial stored), close the database and exit 0.
 */
export async function runStartCommand(config: Config): Promise<number> {
  if (!validateCron(config.syncCron)) {
    throw new ConfigError([
      {
        name: 'SYNC_CRON',
        problem: `not a valid cron expression: ${JSON.stringify(config.syncCron)} (e.g. "*/10 * * * *")`,
      },
    ]);
  }
  const logger = loggerFor(config);
  const signal = listenForShutdown(logger);
  const parts: Partial<Parts> = {};
  try {
    await startParts(config, logger, parts);
  } catch (error) {
    // A failed start-up (a port in use, say) must not leave the demo upstream or the db open.
    await shutdown(parts);
    signal.dispose();
    throw error;
  }
  await signal.received;
  await shutdown(parts);
  signal.dispose();
  return EXIT.ok;
}

interface Parts {
  demo: Demo | null;
  store: MirrorDatabase;
  server: MirrorServer;
  scheduler: Scheduler;
}

/** Starts each part in order, recording it in `parts` as soon as it runs, so a failure can undo it. */
async function startParts(config: Config, logger: Logger, parts: Partial<Parts>): Promise<void> {
  parts.demo = config.upstreamUrl ? null : await startDemo(config, logger);
  const upstreamUrl = config.upstreamUrl ?? parts.demo?.upstream.url ?? '';
  const store = (parts.store = openDatabase(config.databasePath));
  recoverCrashedRuns(store);
  const scheduler = (parts.scheduler = createScheduler({
    cronExpression: config.syncCron,
    randomDelayMs: config.syncRandomDelayMs,
    logger: logger.child({ module: 'scheduler' }),
    run: (abort, onRunStarted) =>
      runIsolatedSync(isolatedSync(config, upstreamUrl, store, logger), abort, onRunStarted).then(() =>
        parts.server?.snapshots.refreshInBackground(),
      ),
  }));
  const server = (parts.server = await buildServer({
    store,
    logger,
    options: serverOptionsFrom(config),
    syncTrigger: () => scheduler.trigger('admin'),
  }));
  const url = await server.listen(config.port, config.host);
  logger.info(
    { url, upstream: upstreamUrl, db: config.databasePath, cron: config.syncCron },
    'coworker-mirror started',
  );
  scheduler.start();
  startupSync(server, scheduler, config, logger);
}

/** Each sync of `start` runs as this very CLI's `sync` in a child process, off the server's heap. */
function isolatedSync(
  config: Config,
  upstreamUrl: string,
  store: MirrorDatabase,
  logger: Logger,
): IsolatedSyncOptions {
  return {
    execPath: process.execPath,
    nodeArgs: process.execArgv,
    cliPath: process.argv[1] ?? '',
    env: { ...process.env, ...syncEnvFrom(config, upstreamUrl) },
    maxHeapMb: config.syncMaxHeapMb,
    maxDurationMs: config.maxSyncDurationMs,
    store,
    logger: logger.child({ module: 'isolated-sync' }),
    stdout: process.stdout,
    stderr: process.stderr,
  };
}

function startupSync(server: MirrorServer, scheduler: Scheduler, config: Config, logger: Logger): void {
  const info = server.snapshots.info;
  const age = info ? Date.now() - info.fetchedAt.getTime() : null;
  if (age !== null && age < config.staleAfterMs) return;
  logger.info({ ageMs: age }, info ? 'mirror is stale: syncing now' : 'mirror is empty: syncing now');
  void scheduler.trigger('startup');
}

async function shutdown(parts: Partial<Parts>): Promise<void> {
  // Stop accepting first, so no client sees a half-closed service, then settle the run.
  const closing = parts.server?.close();
  await parts.scheduler?.stop(SHUTDOWN_GRACE_MS);
  await closing;
  parts.store?.close();
  if (parts.demo) {
    clearInterval(parts.demo.timer);
    await parts.demo.upstream.close();
  }
}
