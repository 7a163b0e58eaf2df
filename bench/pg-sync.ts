/**
 * Sync on PostgreSQL against SQLite, in one process and one run: `--entries` coworkers (default
 * 100,000, pages of 100) from a simulated upstream with no latency; a first sync into an empty
 * database, then an unchanged one, on a SQLite file and on a real PostgreSQL (initdb in a temp
 * folder, fsync off as in the tests, on this machine's loopback). Prints each time and the ratio
 * PostgreSQL / SQLite (issue 20's goal: ≤ 1.5).
 *
 *   npx tsx bench/pg-sync.ts [--entries 100000]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/open.js';
import { openPgStore } from '../src/db/postgres/store.js';
import type { Store } from '../src/db/store.js';
import { silentLogger } from '../src/logger.js';
import { startSimulatedUpstream, type SimulatedUpstream } from '../src/simulated-upstream/index.js';
import { runSync } from '../src/sync/run-sync.js';
import { pgTarget, startPostgres } from '../test/helpers/postgres.js';
import { checkGoal, machineLine, ratio, seconds } from './lib/report.js';
import { benchSyncSettings } from './lib/settings.js';
import { withTempDir } from './lib/temp-dir.js';

const { values } = parseArgs({ options: { entries: { type: 'string', default: '100000' } } });
const entries = Number(values.entries);
if (!Number.isInteger(entries) || entries < 1) throw new Error(`--entries must be a positive integer`);

async function timed(store: Store, upstream: SimulatedUpstream): Promise<number> {
  const started = performance.now();
  await runSync(benchSyncSettings(upstream.url), { store, logger: silentLogger() });
  return performance.now() - started;
}

async function phases(
  store: Store,
  upstream: SimulatedUpstream,
): Promise<{ first: number; unchanged: number }> {
  const first = await timed(store, upstream);
  const unchanged = await timed(store, upstream);
  return { first, unchanged };
}

async function main(): Promise<void> {
  const upstream = await startSimulatedUpstream({ seed: 3, count: entries, pageSize: 100 });
  const server = await startPostgres();
  try {
    const sqlite = await withTempDir(async (dir) => {
      const store = openDatabase(join(dir, 'mirror.db'));
      try {
        return await phases(store, upstream);
      } finally {
        store.close();
      }
    });
    const pgStore = await openPgStore(pgTarget(server.url(await server.createDatabase('bench'))), {});
    let pg: { first: number; unchanged: number };
    try {
      pg = await phases(pgStore, upstream);
    } finally {
      await pgStore.close();
    }
    console.log(`pg-sync: ${entries.toLocaleString('en-US')} entries, pages of 100`);
    console.log(machineLine());
    for (const phase of ['first', 'unchanged'] as const) {
      const r = pg[phase] / sqlite[phase];
      console.log(
        `${phase.padEnd(9)} sqlite ${seconds(sqlite[phase])}  postgres ${seconds(pg[phase])}  ratio ${ratio(r)} ` +
          checkGoal('pg-sync', `${phase} sync postgres / sqlite`, r, 1.5, '×'),
      );
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
}

await main();
