import { openDatabase } from '../../src/db/open.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { runSync } from '../../src/sync/run-sync.js';
import { benchSyncSettings } from './settings.js';

/** A first sync of `entries` simulated coworkers (pages of 8) into `file`, its WAL folded in. */
export async function firstSync(file: string, entries: number, seed: number): Promise<void> {
  const upstream = await startSimulatedUpstream({ count: entries, pageSize: 8, seed });
  const store = openDatabase(file);
  try {
    const summary = await runSync(benchSyncSettings(upstream.url), { store, logger: silentLogger() });
    if (summary.counts.added !== entries)
      throw new Error(`expected ${entries} added, got ${summary.counts.added}`);
    store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    store.close();
    await upstream.close();
  }
}
