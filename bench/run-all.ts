/**
 * Runs every benchmark, each in its own process (so RSS figures are per benchmark), streaming their
 * output, then prints one table of every goal they recorded. The list and each one's arguments are
 * bench/lib/catalogue.ts's. Exits non-zero only when a benchmark itself failed; an unmet goal is a
 * result, shown as such.
 *
 *   npx tsx bench/run-all.ts
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeOutcome, runScript } from './lib/child.js';
import { machineLine, RESULTS_FILE_ENV, seconds, type GoalResult } from './lib/report.js';
import { withTempDir } from './lib/temp-dir.js';
import { BENCHES as CATALOGUE } from './lib/catalogue.js';

/** The benchmarks measured in a full run, in the catalogue's order; the rest are run by hand. */
const BENCHES = CATALOGUE.flatMap((bench) => (bench.args === null ? [] : [{ ...bench, args: bench.args }]));

const script = (name: string): string => fileURLToPath(new URL(`./${name}.ts`, import.meta.url));

function formatValue(value: number, unit: string): string {
  const text = Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(2);
  return `${text}${unit}`;
}

function table(rows: readonly string[][]): string {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, col) => cell.padEnd(widths[col] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function runBenches(resultsFile: string): Promise<string[]> {
  const failures: string[] = [];
  for (const bench of BENCHES) {
    const file = script(bench.name);
    if (bench.optional && !existsSync(file)) {
      console.log(`\n== ${bench.name}: skipped (bench/${bench.name}.ts does not exist)`);
      continue;
    }
    console.log(`\n== ${bench.name} ${bench.args.join(' ')}`.trimEnd());
    const started = performance.now();
    const outcome = await runScript(file, bench.args, {
      timeoutMs: bench.timeoutMs,
      env: { ...process.env, [RESULTS_FILE_ENV]: resultsFile },
    });
    const status = outcome.code === 0 ? 'ok' : `FAILED (${describeOutcome(outcome)})`;
    console.log(`== ${bench.name}: ${status} in ${seconds(performance.now() - started)}`);
    if (outcome.code !== 0) failures.push(`${bench.name}: ${describeOutcome(outcome)}`);
  }
  return failures;
}

function summary(resultsFile: string, failures: readonly string[]): void {
  const text = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
  const results = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as GoalResult);
  const rows = [
    ['bench', 'goal', 'measured', 'target', 'met'],
    ...results.map((r) => [
      r.bench,
      r.name,
      formatValue(r.value, r.unit),
      `≤ ${formatValue(r.goal, r.unit)}`,
      r.met ? 'yes' : 'no',
    ]),
    ...failures.map((f) => [
      f.split(':')[0] ?? f,
      'bench completed',
      f.slice(f.indexOf(':') + 2),
      'exit code 0',
      'no',
    ]),
  ];
  const met = results.filter((r) => r.met).length;
  console.log(
    `\n== summary: ${met} of ${results.length} goals met${failures.length > 0 ? `, ${failures.length} bench(es) failed` : ''}`,
  );
  console.log(table(rows));
}

console.log(machineLine());
const failures = await withTempDir(async (dir) => {
  const resultsFile = join(dir, 'goals.jsonl');
  const failed = await runBenches(resultsFile);
  summary(resultsFile, failed);
  return failed;
});
process.exitCode = failures.length > 0 ? 1 : 0;
