import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import {
  startSimulatedSite,
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

/** How soon a change held by a running sync is tried again. */
const HOLD_RETRY_MS = 500;

/**
 * Changes the demo's data every `everyMs`, then asks for a sync. The data never changes under a
 * sync's crawl: a crawl that saw the listing move would be retried or refused (drift, unstable
 * order), which in real life is the upstream's doing, not something the demo should show.
 */
function changeEvery(
  everyMs: number,
  upstream: SimulatedUpstream,
  logger: Logger,
  onMutation: () => void,
  syncing: () => boolean,
): { stop(): void } {
  let held: NodeJS.Timeout | null = null;
  const mutate = (): void => {
    held = null;
    if (syncing()) {
      held = setTimeout(mutate, HOLD_RETRY_MS);
      held.unref();
      return;
    }
    const change = upstream.data.mutateRandomly();
    logger.info({ change }, 'demo upstream changed its data; syncing');
    onMutation();
  };
  const timer = setInterval(() => {
    if (held === null) mutate();
  }, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      if (held) clearTimeout(held);
    },
  };
}

/**
 * Starts the simulated upstream of the demo. It resumes from the listing the demo database last
 * stored, so a restart is not mistaken for everyone's data changing back to the seed's; its data
 * then changes every DEMO_MUTATE_EVERY and `onMutation` lets the caller sync at that pace.
 */
export async function startDemo(
  config: Pick<Config, 'demo'>,
  store: Store,
  logger: Logger,
  onMutation: () => void,
  /** True while a sync runs: a change of the data waits for it to end. */
  syncing: () => boolean = () => false,
): Promise<Demo> {
  const latest = await store.latestSucceededRun();
  const entries = latest
    ? (await store.listingAt(latest)).entries.map((text) => JSON.parse(text) as Record<string, unknown>)
    : undefined;
  const site = await startSimulatedSite({
    seed: 1,
    count: 45,
    port: config.demo.port,
    entries: entries && entries.length > 0 ? entries : undefined,
    names: { port: 'DEMO_UPSTREAM_PORT' },
  });
  const { upstream, media } = site;
  const changes = changeEvery(config.demo.mutateEveryMs, upstream, logger, onMutation, syncing);
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
      changes.stop();
      await site.close();
    },
  };
}
