/**
 * A run's cost against the history it keeps: `--entries` coworkers (default 1,200), every one of
 * them changed by each of `--runs` runs (default 60), recorded as a sync records them (stage, diff
 * by uuid groups, one commit), on a SQLite file and on a real PostgreSQL (initdb in a temp folder,
 * as the tests start it). Every uuid's history grows by one version a run; what a run costs should
 * grow with what it changes only. Prints each store's median run time over runs 6–10 (the
 * baseline) and over the last 5, and their ratio (goal ≤ 1.3: a statement that reads the versions
 * a slot has had made the last runs 25× the first).
 *
 *   npx tsx bench/deep-history.ts [--entries 1200] [--runs 60]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/open.js';
import { openPgStore } from '../src/db/postgres/store.js';
import type { Store } from '../src/db/store.js';
import { pgTarget, startPostgres } from '../test/helpers/postgres.js';
import { commitListing } from '../test/helpers/store-runs.js';
import { median } from './lib/stats.js';
import { checkGoal, machineLine, millis, ratio } from './lib/report.js';
import { withTempDir } from './lib/temp-dir.js';

const GOAL = 1.3;
const BASELINE = { from: 6, to: 10 };
const TAIL = 5;

const { values } = parseArgs({
  options: { entries: { type: 'string', default: '1200' }, runs: { type: 'string', default: '60' } },
});
const entries = Number(values.entries);
const runs = Number(values.runs);
if (!Number.isInteger(entries) || entries < 1) throw new Error('--entries must be a positive integer');
if (!Number.isInteger(runs) || runs < BASELINE.to + TAIL) {
  throw new Error(`--runs must be an integer of at least ${BASELINE.to + TAIL}`);
}

const uuid = (i: number): string => i.toString(16).padStart(32, '0');

/** Run `run`'s listing: every coworker in a state of that run alone. */
function listing(run: number): string[] {
  return Array.from({ length: entries }, (_, i) =>
    JSON.stringify({
      uuid: uuid(i),
      name: `Person ${i}`,
      post: `Post ${i} as of run ${run}`,
      show_image: true,
      images: [],
    }),
  );
}

/** Each run's time in ms, in order. */
async function history(store: Store): Promise<number[]> {
  const times: number[] = [];
  for (let run = 1; run <= runs; run++) {
    const bodies = listing(run);
    const started = performance.now();
    const { counts } = await commitListing(store, bodies);
    times.push(performance.now() - started);
    const expected = run === 1 ? counts.added : counts.changed;
    if (expected !== entries) throw new Error(`run ${run} recorded ${JSON.stringify(counts)}`);
  }
  return times;
}

function report(name: string, times: readonly number[]): void {
  const baseline = median(times.slice(BASELINE.from - 1, BASELINE.to));
  const last = median(times.slice(-TAIL));
  const r = last / baseline;
  console.log(
    `${name.padEnd(8)} runs ${BASELINE.from}–${BASELINE.to} ${millis(baseline)}  last ${TAIL} ${millis(last)}  ` +
      `ratio ${ratio(r)} ${checkGoal('deep-history', `${name} last runs / runs ${BASELINE.from}–${BASELINE.to}`, r, GOAL, '×')}`,
  );
  const every = Math.max(1, Math.floor(runs / 10));
  const sampled = times.map((ms, i) => [i + 1, ms] as const).filter(([run]) => run % every === 0);
  console.log(`         by run: ${sampled.map(([run, ms]) => `${run} ${millis(ms)}`).join(', ')}`);
}

async function main(): Promise<void> {
  const sqlite = await withTempDir(async (dir) => {
    const store = openDatabase(join(dir, 'mirror.db'));
    try {
      return await history(store);
    } finally {
      store.close();
    }
  });
  const server = await startPostgres();
  let pg: number[];
  try {
    const store = await openPgStore(pgTarget(server.url(await server.createDatabase('bench'))), {});
    try {
      pg = await history(store);
    } finally {
      await store.close();
    }
  } finally {
    await server.stop();
  }
  console.log(
    `deep-history: ${entries.toLocaleString('en-US')} entries, all changed by each of ${runs} runs (median run time)`,
  );
  console.log(machineLine());
  report('sqlite', sqlite);
  report('postgres', pg);
}

await main();
