import { loadConfig } from '../../src/config/load-config.js';
import type { SyncConfig } from '../../src/sync/run-sync.js';

/**
 * What `coworker-mirror sync` runs with when nothing is configured (retries included: a bench that
 * fails on a transient error a real run would retry measures nothing), with a page cap that fits
 * the largest bench listing, and the variables in `env`.
 */
export function benchSyncSettings(upstreamUrl: string, env: Record<string, string> = {}): SyncConfig {
  const config = loadConfig({ SYNC_MAX_PAGES: '1000000', ...env, UPSTREAM_URL: upstreamUrl });
  const { target } = config.upstream;
  if (!target) throw new Error('no upstream');
  return { ...config, upstream: { ...config.upstream, target } };
}
