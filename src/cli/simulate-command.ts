import type { Config } from '../config/load-config.js';
import { EXIT } from './exit-codes.js';
import { createLogger } from '../logger.js';
import { startSimulatedUpstream } from '../simulated-upstream/index.js';
import { LIST_PATH } from '../upstream/contract.js';
import { ConfigError } from '../errors.js';

export interface SimulateOptions {
  port: number;
  host: string;
  seed: number;
  count: number;
  /** 0: the data never changes. */
  mutateEveryMs: number;
}

/**
 * `simulate`: the simulated upstream on its own, to point a mirror (or a browser) at. Its media URLs
 * name its own address, so they answer where it serves media. Runs until SIGINT/SIGTERM.
 */
export async function runSimulateCommand(
  config: Pick<Config, 'log'>,
  options: SimulateOptions,
): Promise<number> {
  const logger = createLogger({ level: config.log.level, pretty: process.stdout.isTTY === true });
  let upstream;
  try {
    upstream = await startSimulatedUpstream({
      port: options.port,
      host: options.host,
      seed: options.seed,
      count: options.count,
      ...(options.port !== 0 ? { mediaBaseUrl: `http://${options.host}:${options.port}/media/` } : {}),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw error;
    throw new ConfigError([
      {
        name: '--port',
        problem: `cannot listen on ${options.host}:${options.port} (${code}); choose another`,
      },
    ]);
  }
  const timer =
    options.mutateEveryMs > 0
      ? setInterval(() => {
          logger.info({ change: upstream.data.mutateRandomly() }, 'simulated upstream changed its data');
        }, options.mutateEveryMs)
      : null;
  logger.info(
    { url: upstream.url, list: `${upstream.url}${LIST_PATH}`, entries: upstream.data.count },
    'simulated upstream listening',
  );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  logger.info({ signal }, 'shutting down');
  if (timer) clearInterval(timer);
  await upstream.close();
  return EXIT.ok;
}
