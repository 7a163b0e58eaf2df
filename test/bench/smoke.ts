import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BENCHES, type BenchEntry } from '../../bench/lib/catalogue.js';
import type { GoalResult } from '../../bench/lib/report.js';
import { postgresMissing } from '../helpers/postgres.js';
import { ensureBuilt, ROOT } from '../helpers/process.js';
import { benchTools, missing } from '../helpers/requirements.js';

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs bench/<name>.ts at its smoke size as `npm run bench:*` would: tsx, from the repository. */
function runBench(bench: BenchEntry, resultsFile: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const tsx = join(ROOT, 'node_modules/.bin/tsx');
    const child = spawn(tsx, [join('bench', `${bench.name}.ts`), ...bench.smoke], {
      cwd: ROOT,
      env: { ...process.env, BENCH_RESULTS_FILE: resultsFile, LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    // A bench that hangs is stopped with everything it started (its servers are its children).
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null && child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

function goalsOf(file: string): GoalResult[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as GoalResult);
}

/** Whether the bench's tools are here; a missing one skips its test, or fails it in CI. */
function toolsMissing(bench: BenchEntry): boolean {
  for (const tool of bench.needs ?? []) {
    if (tool === 'postgres') {
      if (postgresMissing !== null) return true;
    } else if (missing(benchTools[tool]())) return true;
  }
  return false;
}

/**
 * Each bench of `benches` once at its tiny size: it must run to its end and print its report,
 * and the goals it records must be measured numbers. Whether a goal is met is not asserted:
 * speed is for the benches' own runs, never for a test.
 */
export function smokeBenches(title: string, benches: readonly BenchEntry[]): void {
  describe(title, () => {
    for (const bench of benches) {
      describe.skipIf(toolsMissing(bench))(bench.name, () => {
        it(`runs bench/${bench.name}.ts ${bench.smoke.join(' ')} to its end`, async () => {
          ensureBuilt();
          const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
          onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
          const resultsFile = join(dir, 'goals.jsonl');
          const outcome = await runBench(bench, resultsFile);
          const tail = outcome.output.split('\n').slice(-30).join('\n');
          expect({ code: outcome.code, signal: outcome.signal }, tail).toEqual({ code: 0, signal: null });
          expect(outcome.output, tail).toMatch(/^machine: \d+ cores/m);
          const goals = goalsOf(resultsFile);
          if (bench.goals !== false) {
            expect(goals.length, `${bench.name} recorded no goal:\n${tail}`).toBeGreaterThan(0);
          }
          for (const goal of goals) {
            expect(Number.isFinite(goal.value), `${goal.name} measured ${goal.value}\n${tail}`).toBe(true);
          }
        });
      });
    }
  });
}

export const needsPostgres = (bench: BenchEntry): boolean => bench.needs?.includes('postgres') ?? false;
export { BENCHES };
