/**
 * What a command costs to start (issue 21, section 4): wall time (median of 7) and peak RSS of
 * `--version` and `runs` on a small database, each against a bare `node -e 0` of the same run.
 * Goals: both ≤ 2× `node -e 0`, `--version` ≤ 70 MB RSS.
 *
 *   npm run build && npx tsx bench/cli-startup.ts [--repeat 7] [--cli other/dist/cli.js]
 *     [--before old/dist/cli.js: the same commands of another build, interleaved in the same run]
 *
 * On a loaded machine a bare `node -e 0` waits for the CPU as long as it runs, and the ratios move by
 * ±0.5 from one run to the next: compare a before with `--before`, in one run, rather than across runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/open.js';
import { buildHistory } from './lib/history-fixture.js';
import { checkGoal, machineLine, megabytes, millis, ratio } from './lib/report.js';
import { withTempDir } from './lib/temp-dir.js';

const { values } = parseArgs({
  options: { repeat: { type: 'string', default: '7' }, cli: { type: 'string' }, before: { type: 'string' } },
});
const CLI = values.cli ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const repeat = Number(values.repeat);

interface Sample {
  ms: number;
  rssBytes: number;
}

/** One run under GNU time for its peak RSS; wall time from here (GNU time rounds to 10 ms). */
function once(args: string[], dir: string): Sample {
  const rssFile = join(dir, 'rss');
  const started = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%M', '-o', rssFile, process.execPath, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr.toString()}`);
  return { ms, rssBytes: Number(readFileSync(rssFile, 'utf8').trim()) * 1024 };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

/** The cases run interleaved, so a burst of load elsewhere hits each alike. */
function measure(cases: Record<string, string[]>, dir: string): Record<string, Sample> {
  const samples: Record<string, Sample[]> = {};
  for (let i = 0; i < repeat; i++) {
    for (const [name, args] of Object.entries(cases)) (samples[name] ??= []).push(once(args, dir));
  }
  return Object.fromEntries(
    Object.entries(samples).map(([name, s]) => [
      name,
      { ms: median(s.map((x) => x.ms)), rssBytes: Math.max(...s.map((x) => x.rssBytes)) },
    ]),
  );
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  await withTempDir((dir) => {
    const file = join(dir, 'mirror.db');
    const db = openDatabase(file);
    buildHistory(db, { coworkers: 45, runs: 3, editsPerRun: 5, fieldsPerEdit: 2 });
    db.close();
    const before: Record<string, string[]> = values.before
      ? {
          'before: --version': [values.before, '--version'],
          'before: runs': [values.before, 'runs', '--db', file],
        }
      : {};
    const results = measure(
      {
        'node -e 0': ['-e', '0'],
        '--version': [CLI, '--version'],
        runs: [CLI, 'runs', '--db', file],
        ...before,
      },
      dir,
    );
    const base = results['node -e 0'];
    if (!base) throw new Error('no baseline');
    console.log(machineLine());
    console.log(`median of ${repeat}, peak RSS the largest of them`);
    for (const [name, r] of Object.entries(results)) {
      const times = r.ms / base.ms;
      const goal =
        name === 'node -e 0' || name.startsWith('before')
          ? ''
          : ` ${checkGoal('cli-startup', `${name} ÷ node -e 0`, times, 2)}`;
      console.log(
        `${name.padEnd(17)} ${millis(r.ms).padStart(10)}  ${megabytes(r.rssBytes).padStart(9)}  ${ratio(times)}×${goal}`,
      );
    }
    const version = results['--version'];
    if (version) {
      console.log(
        `--version RSS ${megabytes(version.rssBytes)} ${checkGoal('cli-startup', '--version RSS', version.rssBytes / 1e6, 70, ' MB')}`,
      );
    }
  });
}

await main();
