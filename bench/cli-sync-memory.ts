/**
 * Peak RSS of the compiled CLI's `sync`, as cron runs it: `dist/cli.js sync` with its shebang's
 * flags and the default settings, against a simulated upstream of `--entries` coworkers (default
 * 1,000,000) held by this process. Phases: (a) the crawl alone, the baseline, in its own process
 * (bench/lib/sync-phase.ts under the same heap limit as the sync); (b) a first sync into an empty
 * database; (c) an unchanged sync. Peak RSS from GNU time (`%M`), which counts the whole process,
 * every thread included. Needs `npm run build` first.
 *
 * The baseline is compiled as the CLI is (esbuild, into dist/ beside the CLI) and run with the CLI's node
 * flags, and each phase is timed the same way: the wall time of its process, start-up included.
 * (It ran under tsx and counted only the crawl itself while the sync counted its whole process.)
 *
 * `--rounds N` (default 3) repeats the three phases, alternated, into a fresh database each round:
 * on this 2-core virtual machine the same phase's wall time swings by a fifth from one run to the
 * next, so one pair says little. Each round's ratio is printed; the goal is checked on their median,
 * and the memory goals on each phase's highest peak.
 *
 *   npx tsx bench/cli-sync-memory.ts [--entries 1000000] [--rounds 3]
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { startSimulatedUpstream } from '../src/simulated-upstream/index.js';
import { crawlListing } from './lib/client.js';
import { checkGoal, machineLine, megabytes, ratio, seconds } from './lib/report.js';
import { benchSyncSettings } from './lib/settings.js';
import type { PhaseReport } from './lib/sync-phase.js';
import { median } from './lib/stats.js';
import { withTempDir } from './lib/temp-dir.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const PHASE_SCRIPT = fileURLToPath(new URL('./lib/sync-phase.ts', import.meta.url));
const COMPILED_PHASE = fileURLToPath(new URL('../dist/bench-sync-phase.mjs', import.meta.url));
// The shebang's flags (`#!/usr/bin/env -S node …`): the CLI as cron starts it.
const SHEBANG_FLAGS = (readFileSync(CLI, 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(3);
const GOAL_MB = 200;

const { values } = parseArgs({
  options: { entries: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } },
});
const entries = Number(values.entries);
if (!Number.isInteger(entries) || entries < 1)
  throw new Error(`--entries must be a positive integer, got ${values.entries}`);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');

interface Measured {
  ms: number;
  maxRssBytes: number;
  output: string;
}

/** One process under GNU time; its peak RSS is the last line time writes to stderr. */
function measured(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Measured> {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'PEAK_RSS_KB %M', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      const kb = /PEAK_RSS_KB (\d+)/.exec(output)?.[1];
      if (code !== 0 || kb === undefined) return reject(new Error(`${args.join(' ')} failed:\n${output}`));
      resolve({ ms: performance.now() - started, maxRssBytes: Number(kb) * 1024, output });
    });
  });
}

/** The phase script as the CLI is built (scripts/build.sh), its packages left to node_modules. */
async function compilePhase(): Promise<void> {
  await build({
    entryPoints: [PHASE_SCRIPT],
    outfile: COMPILED_PHASE,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
}

interface Round {
  ratio: number;
  first: Measured;
  unchanged: Measured;
  dbBytes: number;
}

/** One round: the crawl alone, then a first and an unchanged sync into a fresh database. */
async function runRound(round: number, upstreamUrl: string, dir: string): Promise<Round> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'error' };
  const heapMb = benchSyncSettings(upstreamUrl).sync.maxHeapMb;
  const result = join(dir, 'baseline.json');
  const baseline = await measured(
    [
      process.execPath,
      ...SHEBANG_FLAGS,
      `--max-old-space-size=${heapMb}`,
      COMPILED_PHASE,
      ...['--phase', 'crawl', '--url', upstreamUrl, '--result', result],
    ],
    process.env,
  );
  const crawl = JSON.parse(readFileSync(result, 'utf8')) as PhaseReport;
  const db = join(dir, `mirror-${round}.db`);
  const sync = [process.execPath, ...SHEBANG_FLAGS, CLI, 'sync', '--upstream', upstreamUrl, '--db', db];
  const first = await measured(sync, env);
  const unchanged = await measured(sync, env);
  console.log(
    `cli-sync-memory round ${round} (a) crawl only (compiled, ${heapMb} MiB heap): ${seconds(baseline.ms)} wall ` +
      `(${seconds(crawl.ms)} in the crawl itself), peak RSS ${megabytes(baseline.maxRssBytes)}`,
  );
  for (const [label, phase] of [
    ['(b) first sync', first],
    ['(c) unchanged sync', unchanged],
  ] as const) {
    const line = phase.output.split('\n').find((l) => l.startsWith('run ')) ?? '';
    console.log(
      `cli-sync-memory round ${round} ${label}: ${seconds(phase.ms)} wall, ` +
        `peak RSS ${megabytes(phase.maxRssBytes)}; ${line}`,
    );
  }
  console.log(`cli-sync-memory round ${round} first sync / crawl only: ${ratio(first.ms / baseline.ms)}`);
  const dbBytes = statSync(db).size;
  rmSync(db, { force: true });
  return { ratio: first.ms / baseline.ms, first, unchanged, dbBytes };
}

await compilePhase();
await withTempDir(async (dir) => {
  const upstream = await startSimulatedUpstream({ seed: 11, count: entries });
  try {
    // Rendered once here, so no phase pays for the upstream's first rendering of its pages.
    await crawlListing(benchSyncSettings(upstream.url));
    console.log(machineLine());
    const done: Round[] = [];
    for (let round = 1; round <= rounds; round++) done.push(await runRound(round, upstream.url, dir));
    for (const [label, peak] of [
      ['(b) first sync', Math.max(...done.map((r) => r.first.maxRssBytes))],
      ['(c) unchanged sync', Math.max(...done.map((r) => r.unchanged.maxRssBytes))],
    ] as const) {
      console.log(
        `cli-sync-memory ${label}, highest peak RSS of ${rounds} round(s): ${megabytes(peak)} ` +
          `${checkGoal('cli-sync-memory', `${label} peak RSS, ${entries} entries`, peak / 1e6, GOAL_MB, ' MB')}`,
      );
    }
    const ratios = done.map((r) => r.ratio);
    const mid = median(ratios);
    const dbBytes = done[done.length - 1]?.dbBytes ?? 0;
    console.log(
      `cli-sync-memory first sync / crawl only, wall of each process, median of ${rounds} alternated round(s) ` +
        `(${ratios.map(ratio).join(', ')}): ${ratio(mid)} ` +
        `${checkGoal('cli-sync-memory', `first sync / crawl, ${entries} entries`, mid, 2, '×')}; ` +
        `database after the syncs ${megabytes(dbBytes)}, ${Math.round(dbBytes / entries)} B per entry`,
    );
  } finally {
    await upstream.close();
  }
});
