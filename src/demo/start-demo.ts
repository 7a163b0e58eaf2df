import type { Config } from '../config/load-config.js';
import type { MirrorDatabase } from '../db/open.js';
import { latestSucceededRun, listingAt } from '../db/queries.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import {
  startSimulatedMediaHost,
  startSimulatedUpstream,
  type SimulatedMediaHost,
  type SimulatedUpstream,
} from '../simulated-upstream/index.js';

export { DEMO_DATABASE_PATH, DEMO_UPSTREAM_LABEL } from './demo-label.js';

export interface Demo {
  upstream: SimulatedUpstream;
  /** The demo's media host: real PNG/JPEG/WebP/MP4 bytes, mirrored unless MEDIA_ORIGINS says otherwise. */
  media: SimulatedMediaHost;
  stop(): Promise<void>;
}

/**
 * The media host listens on the port after the demo upstream's, so media URLs stay the same across
 * restarts (a new port would read as every image changing); with port 0 both take any free port.
 */
function mediaPortFor(port: number): number {
  return port === 0 ? 0 : port + 1;
}

function portRefused(error: unknown, name: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return error;
  return new ConfigError([
    {
      name,
      problem: `cannot listen on 127.0.0.1:${port} (${code}); choose another ${name} (0: any free port)`,
    },
  ]);
}

/**
 * Starts the simulated upstream of the demo. It resumes from the listing the demo database last
 * stored, so a restart is not mistaken for everyone's data changing back to the seed's; its data
 * then changes every DEMO_MUTATE_EVERY and `onMutation` lets the caller sync at that pace.
 */
export async function startDemo(
  config: Pick<Config, 'demo'>,
  store: MirrorDatabase,
  logger: Logger,
  onMutation: () => void,
): Promise<Demo> {
  const latest = latestSucceededRun(store);
  const entries = latest
    ? listingAt(store, latest).entries.map((text) => JSON.parse(text) as Record<string, unknown>)
    : undefined;
  const mediaPort = mediaPortFor(config.demo.port);
  const media = await startSimulatedMediaHost({ port: mediaPort }).catch((error: unknown) => {
    throw portRefused(error, 'DEMO_UPSTREAM_PORT', mediaPort);
  });
  let upstream: SimulatedUpstream;
  try {
    upstream = await startSimulatedUpstream({
      seed: 1,
      count: 45,
      port: config.demo.port,
      mediaBaseUrl: media.mediaBaseUrl,
      ...(entries && entries.length > 0 ? { entries } : {}),
    });
  } catch (error) {
    await media.close();
    throw portRefused(error, 'DEMO_UPSTREAM_PORT', config.demo.port);
  }
  const timer = setInterval(() => {
    const change = upstream.data.mutateRandomly();
    logger.info({ change }, 'demo upstream changed its data; syncing');
    onMutation();
  }, config.demo.mutateEveryMs);
  timer.unref();
  logger.warn(
    {
      demoUpstream: upstream.url,
      demoMedia: media.url,
      mutateEveryMs: config.demo.mutateEveryMs,
      db: store.file,
      resumedFromRun: latest?.id ?? null,
    },
    'DEMO MODE: no UPSTREAM_URL is set, so this mirrors the built-in simulated upstream, whose invented data ' +
      'changes every few minutes (each change is synced at once). To mirror a real site: ' +
      'UPSTREAM_URL=https://your-site.example npm start',
  );
  return {
    upstream,
    media,
    stop: async () => {
      clearInterval(timer);
      await upstream.close();
      await media.close();
    },
  };
}
