import { onTestFinished } from 'vitest';
import type { MirrorDatabase } from '../../src/db/open.js';
import { silentLogger } from '../../src/logger.js';
import {
  startSimulatedUpstream,
  type SimulatedUpstream,
  type SimulatedUpstreamOptions,
} from '../../src/simulated-upstream/index.js';
import { runSync, type SyncSettings, type SyncSummary } from '../../src/sync/run-sync.js';

export async function simulatedUpstream(options: SimulatedUpstreamOptions = {}): Promise<SimulatedUpstream> {
  const upstream = await startSimulatedUpstream(options);
  onTestFinished(() => upstream.close());
  return upstream;
}

export function syncSettings(upstreamUrl: string, overrides: Partial<SyncSettings> = {}): SyncSettings {
  return {
    upstreamUrl,
    concurrency: 4,
    maxPages: 1000,
    maxCrawlAttempts: 2,
    allowEmpty: false,
    requestTimeoutMs: 5000,
    connectTimeoutMs: 5000,
    maxBodyBytes: 20 * 1024 * 1024,
    maxAttempts: 2,
    maxRetryAfterMs: 2000,
    ...overrides,
  };
}

export function sync(
  store: MirrorDatabase,
  upstream: { url: string },
  overrides: Partial<SyncSettings> = {},
): Promise<SyncSummary> {
  return runSync(syncSettings(upstream.url, overrides), { store, logger: silentLogger() });
}

/** Every table but `runs`, in full: what a failed run must leave byte-for-byte unchanged. */
export function storedState(store: MirrorDatabase): Record<string, unknown[]> {
  const tables = ['coworkers', 'versions', 'listing_positions', 'changes', 'options_bodies'];
  return Object.fromEntries(
    tables.map((t) => [t, store.sqlite.prepare(`select * from ${t} order by rowid`).all()]),
  );
}
