import type { Config } from './config.js';
import { openDatabase, type MirrorDatabase } from './db/open.js';
import { EXIT } from './exit-codes.js';
import { buildServer, serverOptionsFrom, type MirrorServer } from './http/server.js';
import { createLogger, type Logger } from './logger.js';
import { startSimulatedUpstream, type SimulatedUpstream } from './simulated-upstream/index.js';
import { recoverCrashedRuns } from './sync/run-lock.js';
import { runSync } from './sync/run-sync.js';
import { createScheduler, validateCron, type Scheduler } from './sync/scheduler.js';
import { syncSettingsFrom } from './sync/settings.js';
import { ConfigError } from './errors.js';

/** Graceful shutdown must end within this, whatever a run in flight is doing. */
const SHUTDOWN_GRACE_MS = 10_000;

function loggerFor(config: Config): Logger {
  return createLogger({ level: config.logLevel, pretty: process.stdout.isTTY === true });
}

function waitForSignal(logger: Logger): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'shutting down');
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** `serve`: the HTTP service alone, reading what `sync` (any process) writes. */
export async function runServeCommand(config: Config): Promise<number> {
  const logger = loggerFor(config);
  const store = openDatabase(config.databasePath);
  const server = await buildServer({ store, logger, options: serverOptionsFrom(config) });
  const url = await server.listen(config.port, config.host);
  logger.info({ url, db: config.databasePath }, 'serving the mirror');
  await waitForSignal(logger);
  await server.close();
  store.close();
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
  const demo = config.upstreamUrl ? null : await startDemo(config, logger);
  const upstreamUrl = config.upstreamUrl ?? demo?.upstream.url ?? '';
  const store = openDatabase(config.databasePath);
  recoverCrashedRuns(store);
  let server: MirrorServer | null = null;
  const scheduler = createScheduler({
    cronExpression: config.syncCron,
    randomDelayMs: config.syncRandomDelayMs,
    logger: logger.child({ module: 'scheduler' }),
    run: (signal, onRunStarted) =>
      runSync(syncSettingsFrom(config, upstreamUrl), { store, logger, signal, onRunStarted }).then(() => {
        server?.snapshots.refresh();
      }),
  });
  server = await buildServer({
    store,
    logger,
    options: serverOptionsFrom(config),
    syncTrigger: () => scheduler.trigger('admin'),
  });
  const url = await server.listen(config.port, config.host);
  logger.info(
    { url, upstream: upstreamUrl, db: config.databasePath, cron: config.syncCron },
    'coworker-mirror started',
  );
  scheduler.start();
  startupSync(server, scheduler, config, logger);
  await waitForSignal(logger);
  await shutdown({ server, scheduler, store, demo });
  return EXIT.ok;
}

function startupSync(server: MirrorServer, scheduler: Scheduler, config: Config, logger: Logger): void {
  const info = server.snapshots.info;
  const age = info ? Date.now() - info.fetchedAt.getTime() : null;
  if (age !== null && age < config.staleAfterMs) return;
  logger.info({ ageMs: age }, info ? 'mirror is stale: syncing now' : 'mirror is empty: syncing now');
  void scheduler.trigger('startup');
}

async function shutdown(parts: {
  server: MirrorServer;
  scheduler: Scheduler;
  store: MirrorDatabase;
  demo: Demo | null;
}): Promise<void> {
  // Stop accepting first, so no client sees a half-closed service, then settle the run.
  const closing = parts.server.close();
  await parts.scheduler.stop(SHUTDOWN_GRACE_MS);
  await closing;
  parts.store.close();
  if (parts.demo) {
    clearInterval(parts.demo.timer);
    await parts.demo.upstream.close();
  }
}
