import type { Config } from '../config/load-config.js';
import { EXIT } from './exit-codes.js';
import { createLogger } from '../logger.js';
import { startSimulatedSite, type SimulatedSite } from '../simulated-upstream/index.js';

export interface SimulateOptions {
  port: number;
  host: string;
  seed: number;
  count: number;
  /** 0: the data never changes. */
  mutateEveryMs: number;
}

/** What a person runs to mirror the simulated site, its media included. */
export function mirrorCommandFor(site: SimulatedSite): string {
  return `UPSTREAM_URL=${site.upstream.url} MEDIA_ORIGINS=${site.media.url} coworker-mirror start --db ./data/simulated.db`;
}

/**
 * `simulate`: the simulated upstream on its own, to point a mirror (or a browser) at, with its
 * media on a media host on the next port, as the demo runs it. Runs until SIGINT/SIGTERM.
 */
export async function runSimulateCommand(
  config: Pick<Config, 'log'>,
  options: SimulateOptions,
): Promise<number> {
  const logger = createLogger({ level: config.log.level, pretty: process.stdout.isTTY === true });
  const site = await startSimulatedSite({
    port: options.port,
    host: options.host,
    seed: options.seed,
    count: options.count,
    names: { port: '--port', host: '--host' },
  });
  const { upstream } = site;
  const timer =
    options.mutateEveryMs > 0
      ? setInterval(() => {
          logger.info({ change: upstream.data.mutateRandomly() }, 'simulated upstream changed its data');
        }, options.mutateEveryMs)
      : null;
  logger.info(
    {
      url: upstream.url,
      list: upstream.listUrl,
      mediaHost: site.media.url,
      entries: upstream.data.count,
      mirrorWith: mirrorCommandFor(site),
    },
    'simulated upstream listening',
  );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  logger.info({ signal }, 'shutting down');
  if (timer) clearInterval(timer);
  await site.close();
  return EXIT.ok;
}
