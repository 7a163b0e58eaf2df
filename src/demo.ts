import type { Config } from './config.js';
import type { MirrorDatabase } from './db/open.js';
import { latestSucceededRun, listingAt } from './db/queries.js';
import { ConfigError } from './errors.js';
import type { Logger } from './logger.js';
import { startSimulatedUpstream, type SimulatedUpstream } from './simulated-upstream/index.js';

export { DEMO_DATABASE_PATH, DEMO_UPSTREAM_LABEL } from './demo-label.js';

export interface Demo {
  upstream: SimulatedUpstream;
  stop(): Promise<void>;
}

/**
 * Media URLs point at the demo upstream's own port, so they stay the same across restarts (a new
 * port would read as every image changing) and answer wherever the simulated upstream serves media.
 */
function mediaBaseFor(port: number): string | undefined {
  return port === 0 ? undefined : `http://127.0.0.1:${port}/media/`;
}

/**
 * Starts the simulated upstream of the demo. It resumes from the listing the demo database last
 * stored, so a restart is not mistaken for everyone's data changing back to the seed's; its data
 * then changes every DEMO_MUTATE_EVERY and `onMutation` lets the caller sync at that pace.
 */
export async function startDemo(
  config: Config,
  store: MirrorDatabase,
  logger: Logger,
  onMutation: () => void,
): Promise<Demo> {
  const latest = latestSucceededRun(store);
  const entries = latest
    ? listingAt(store, latest).entries.map((text) => JSON.parse(text) as Record<string, unknown>)
    : undefined;
  const mediaBaseUrl = mediaBaseFor(config.demoPort);
  let upstream: SimulatedUpstream;
  try {
    upstream = await startSimulatedUpstream({
      seed: 1,
      count: 45,
      port: config.demoPort,
      ...(entries && entries.length > 0 ? { entries } : {}),
      ...(mediaBaseUrl ? { mediaBaseUrl } : {}),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      throw new ConfigError([
        {
          name: 'DEMO_UPSTREAM_PORT',
          problem: `cannot listen on 127.0.0.1:${config.demoPort} (${code}); choose another DEMO_UPSTREAM_PORT (0: any free port)`,
        },
      ]);
    }
    throw error;
  }
  const timer = setInterval(() => {
    const change = upstream.data.mutateRandomly();
    logger.info({ change }, 'demo upstream changed its data; syncing');
    onMutation();
  }, config.demoMutateEveryMs);
  timer.unref();
  logger.warn(
    {
      demoUpstream: upstream.url,
      mutateEveryMs: config.demoMutateEveryMs,
      db: store.file,
      resumedFromRun: latest?.id ?? null,
    },
    'DEMO MODE: no UPSTREAM_URL is set, so this mirrors the built-in simulated upstream, whose invented data ' +
      'changes every few minutes (each change is synced at once). To mirror a real site: ' +
      'UPSTREAM_URL=https://your-site.example npm start',
  );
  return {
    upstream,
    stop: async () => {
      clearInterval(timer);
      await upstream.close();
    },
  };
}
