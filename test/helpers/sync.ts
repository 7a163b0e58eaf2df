import type { MirrorDatabase } from '../../src/db/open.js';
import type { Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/logger.js';
import {
  startSimulatedUpstream,
  type SimulatedUpstream,
  type SimulatedUpstreamOptions,
} from '../../src/simulated-upstream/index.js';
import { runSync, type SyncSummary } from '../../src/sync/run-sync.js';
import { syncConfig, type TestEnv } from './config.js';
import { untilTestEnds, type Defer } from './scope.js';

/** A simulated upstream on 127.0.0.1:0, closed when the test ends (or `defer` says). */
export async function simulatedUpstream(
  options: SimulatedUpstreamOptions = {},
  defer: Defer = untilTestEnds,
): Promise<SimulatedUpstream> {
  const upstream = await startSimulatedUpstream(options);
  defer(() => upstream.close());
  return upstream;
}

/** One run against `upstream`, with the tests' settings and the variables in `env`. */
export function sync(store: Store, upstream: { url: string }, env: TestEnv = {}): Promise<SyncSummary> {
  return runSync(syncConfig(upstream.url, env), { store, logger: silentLogger() });
}

/** Every table but `runs`, in full: what a failed run must leave byte-for-byte unchanged. */
export function storedState(store: MirrorDatabase): Record<string, unknown[]> {
  const tables = ['coworkers', 'versions', 'listing_positions', 'changes', 'options_bodies'];
  return Object.fromEntries(
    // coworkers has no rowid (migration coworkers_without_rowid): in uuid order.
    tables.map((t) => [
      t,
      store.sqlite.prepare(`select * from ${t} order by ${t === 'coworkers' ? 'uuid' : 'rowid'}`).all(),
    ]),
  );
}
