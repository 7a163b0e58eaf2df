/**
 * What a served snapshot costs: a listing of about `--mib` MiB (two runs, the second editing 1 % of
 * the entries) written straight into the schema, then, each in its own process so its peak RSS is
 * its own, the server's snapshot build of run 1 and the swap to run 2 (built while run 1 is held,
 * run 1 released once replaced), with the layout before this change (every entry held parsed beside
 * the page bytes) and after it (the page bytes alone). Printed as ratios to the listing's bytes:
 * goal ≤ 2× for the snapshot held and for the peak of the swap, each above the process's idle RSS.
 * With `--as-of`, the same for a past snapshot (`?as_of=`) of run 1 with every page loaded: the
 * heap and Buffers it retains, and the bytes it tells the `AS_OF_CACHE_BYTES` budget it costs.
 *
 *   npx tsx bench/snapshot-memory.ts [--mib 200] [--as-of]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/open.js';
import type { PreparedSnapshot } from '../src/drf/snapshot.js';
import { buildSnapshot } from '../src/http/build-in-slices.js';
import { loadPastSnapshot, PageNotLoaded } from '../src/http/past-snapshot.js';
import { runScript } from './lib/child.js';
import { buildHistory } from './lib/history-fixture.js';
import { checkGoal, machineLine, megabytes, ratio, seconds } from './lib/report.js';
import { withTempDir } from './lib/temp-dir.js';

const BENCH = 'snapshot-memory';
const GOAL_RATIO = 2;
/** The simulated upstream's entries as stored: ≈ 285 B of JSON each. */
const ENTRY_BYTES = 285;

const { values } = parseArgs({
  options: {
    mib: { type: 'string', default: '200' },
    'as-of': { type: 'boolean', default: false },
    phase: { type: 'string' },
    db: { type: 'string' },
  },
});

const rss = (): number => process.memoryUsage().rss;
/** What the process holds after a collection: JS heap and Buffers (RSS also counts SQLite's page cache). */
const retained = (): number => {
  global.gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const peak = (): number => process.resourceUsage().maxRSS * 1024;

/** Child: builds run 1, then swaps to run 2 (the old layout also holding every value parsed). */
async function phase(db: string, layout: 'before' | 'after'): Promise<void> {
  const store = openDatabase(db);
  const idleRetained = retained();
  const idle = rss();
  const hold = async (runId: number, previous: PreparedSnapshot | null) => {
    const run = await store.getRun(runId);
    if (!run) throw new Error(`no run ${runId}`);
    // The old build shared nothing with the snapshot it replaced.
    const prepared = await buildSnapshot(store, run, layout === 'after' ? previous : null);
    // The old layout kept every entry parsed beside the page bytes.
    return layout === 'before' ? { prepared, values: Array.from(prepared.entryValues) } : { prepared };
  };
  let held: { prepared: PreparedSnapshot } | null = await hold(1, null);
  const heldRetained = retained() - idleRetained;
  const heldRss = rss();
  const wire = held.prepared.pageTails.reduce((sum, tail) => sum + tail.length, 0);
  held = await hold(2, held.prepared);
  global.gc?.();
  const swapPeak = peak();
  const held2 = held.prepared.count;
  const heldRatio = (heldRss - idle) / wire;
  const swapRatio = (swapPeak - idle) / wire;
  console.log(
    `${layout.padEnd(6)} listing ${megabytes(wire)} (${held2.toLocaleString('en-US')} entries), idle ${megabytes(idle)}; ` +
      `snapshot held: heap+buffers +${megabytes(heldRetained)} = ${ratio(heldRetained / wire)}×, ` +
      `RSS +${megabytes(heldRss - idle)} = ${ratio(heldRatio)}× its bytes` +
      (layout === 'after'
        ? ` ${checkGoal(BENCH, 'snapshot held / listing bytes', heldRatio, GOAL_RATIO, '×')}`
        : '') +
      `; swap peak +${megabytes(swapPeak - idle)} = ${ratio(swapRatio)}× ` +
      (layout === 'after' ? checkGoal(BENCH, 'swap peak / listing bytes', swapRatio, GOAL_RATIO, '×') : ''),
  );
  store.close();
}

/** Child: a past snapshot of run 1 with every page loaded, as `?as_of=` and MEDIA_REWRITE load it. */
async function asOfPhase(db: string, layout: 'before' | 'after'): Promise<void> {
  const store = openDatabase(db);
  const run = await store.getRun(1);
  if (!run) throw new Error('no run 1');
  const idleRetained = retained();
  const idle = rss();
  const past = await loadPastSnapshot(store, run, () => undefined);
  try {
    void past.prepared.pageTails[0];
  } catch (error) {
    if (!(error instanceof PageNotLoaded)) throw error;
    await error.loadAll();
  }
  // The old layout kept every page's entries parsed beside its bytes.
  const held = layout === 'before' ? Array.from(past.prepared.entryValues) : [];
  const heldRetained = retained() - idleRetained;
  const heldRss = rss() - idle;
  const wire = past.prepared.pageTails.reduce((sum, tail) => sum + tail.length, 0);
  const heldRatio = heldRetained / wire;
  console.log(
    `as_of ${layout.padEnd(6)} listing ${megabytes(wire)} (${past.prepared.count.toLocaleString('en-US')} entries); ` +
      `past snapshot held: heap+buffers +${megabytes(heldRetained)} = ${ratio(heldRatio)}× its bytes` +
      (layout === 'after'
        ? ` ${checkGoal(BENCH, 'past snapshot held / listing bytes', heldRatio, GOAL_RATIO, '×')}`
        : '') +
      `, RSS +${megabytes(heldRss)}; counted for AS_OF_CACHE_BYTES ${megabytes(past.bytes)} ` +
      `= ${ratio(past.bytes / heldRetained)}× what it holds (${held.length} values kept)`,
  );
  store.close();
}

async function main(): Promise<void> {
  console.log(machineLine());
  await withTempDir(async (dir) => {
    const db = join(dir, 'mirror.db');
    const coworkers = Math.round((Number(values.mib) * 1024 * 1024) / ENTRY_BYTES);
    const started = performance.now();
    const store = openDatabase(db);
    for (const pragma of ['cache_size = -262144', 'synchronous = OFF']) store.sqlite.pragma(pragma);
    buildHistory(store, { coworkers, runs: 2, editsPerRun: Math.ceil(coworkers / 100), fieldsPerEdit: 1 });
    store.close();
    console.log(
      `snapshot-memory: ${coworkers.toLocaleString('en-US')} entries, 2 runs, built in ${seconds(performance.now() - started)}`,
    );
    const phases = values['as-of']
      ? (['as-of-before', 'as-of-after'] as const)
      : (['before', 'after'] as const);
    for (const layout of phases) {
      await runScript('bench/snapshot-memory.ts', ['--phase', layout, '--db', db], {
        timeoutMs: 30 * 60_000,
        nodeFlags: ['--expose-gc'],
      });
    }
  });
}

if (values.phase === 'before' || values.phase === 'after') {
  await phase(values.db ?? '', values.phase);
} else if (values.phase === 'as-of-before' || values.phase === 'as-of-after') {
  await asOfPhase(values.db ?? '', values.phase === 'as-of-before' ? 'before' : 'after');
} else {
  await main();
}
