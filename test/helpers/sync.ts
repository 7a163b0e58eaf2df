import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * The media folder of a store's syncs, unless a test names one: a folder of its own for each store,
 * kept across its syncs. Without it every sync would use the working directory's
 * `data/mirror.db.media`, which each store that pruned would claim as its own.
 */
const mediaFolders = new WeakMap<Store, string>();
/** Every such folder, removed as the test process exits: a store may outlive the test that synced it. */
const madeFolders: string[] = [];
process.once('exit', () => {
  for (const folder of madeFolders) rmSync(folder, { recursive: true, force: true });
});

function mediaFolderOf(store: Store): string {
  let folder = mediaFolders.get(store);
  if (folder === undefined || !existsSync(folder)) {
    folder = mkdtempSync(join(tmpdir(), 'sync-media-'));
    mediaFolders.set(store, folder);
    madeFolders.push(folder);
  }
  return folder;
}

/** One run against `upstream`, with the tests' settings and the variables in `env`. */
export function sync(store: Store, upstream: { url: string }, env: TestEnv = {}): Promise<SyncSummary> {
  const config = syncConfig(upstream.url, { MEDIA_DIR: mediaFolderOf(store), ...env });
  return runSync(config, { store, logger: silentLogger() });
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
