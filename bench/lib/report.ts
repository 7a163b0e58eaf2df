import { appendFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/**
 * How a benchmark hands its goals to `run-all.ts`: one JSON line per goal appended to the file named
 * by this environment variable (run-all sets it; run alone, a bench only prints).
 */
export const RESULTS_FILE_ENV = 'BENCH_RESULTS_FILE';

export interface GoalResult {
  bench: string;
  /** What was measured, e.g. `crawl c=4 time / floor`. */
  name: string;
  value: number;
  /** Unit printed after value and goal, e.g. `×`, ` ms`, ` MB`. */
  unit: string;
  /** Met when value ≤ goal (every goal of this project is an upper bound). */
  goal: number;
  met: boolean;
}

/** Records a goal for the summary and returns the line's tail: `— goal ≤ 1.2 ✓`. */
export function checkGoal(bench: string, name: string, value: number, goal: number, unit = ''): string {
  const met = Number.isFinite(value) && value <= goal;
  const result: GoalResult = { bench, name, value, unit, goal, met };
  const file = process.env[RESULTS_FILE_ENV];
  if (file) appendFileSync(file, `${JSON.stringify(result)}\n`);
  return `— goal ≤ ${goal}${unit} ${met ? '✓' : '✗'}`;
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
export const millis = (ms: number): string =>
  ms < 0.01 ? `${(ms * 1000).toFixed(2)} µs` : `${ms.toFixed(ms < 1 ? 3 : 2)} ms`;
/** Decimal megabytes (10^6 B), the stricter reading of "300 MB". */
export const megabytes = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
export const ratio = (value: number): string => value.toFixed(2);
export const perSecond = (n: number, ms: number): string =>
  `${Math.round((n * 1000) / ms).toLocaleString('en-US')}`;

/** Other processes share this machine; a busy one shows in the load average and in the figures. */
export function machineLine(): string {
  const [load1 = 0] = loadavg();
  return `machine: ${availableParallelism()} cores, load average ${load1.toFixed(2)} (1 min), node ${process.version}`;
}
