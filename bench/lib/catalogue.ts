/**
 * Every benchmark in bench/, with the arguments `run-all.ts` measures it at and the tiny ones the
 * smoke test (test/bench/smoke.test.ts) runs it at in CI, so that none rots unnoticed while the docs
 * quote its figures. A script in bench/ that is not listed here fails that test.
 */
export interface BenchEntry {
  /** The script's name: bench/<name>.ts. */
  name: string;
  /** The arguments of the measured run, or null when `run-all.ts` leaves it to be run by hand. */
  args: string[] | null;
  timeoutMs: number;
  /** A benchmark whose failure `run-all.ts` reports without failing (it needs a tool not always installed). */
  optional?: boolean;
  /** The smallest run that still takes every path of the script once. */
  smoke: string[];
  /** What the script needs besides node and the built CLI. */
  needs?: readonly Tool[];
  /** False for a script that prints its figures without recording a goal (`checkGoal`). */
  goals?: false;
}

export type Tool = 'postgres' | 'wrk' | 'sqlite3' | 'time';

const MINUTE = 60_000;

export const BENCHES: readonly BenchEntry[] = [
  {
    name: 'crawl',
    args: [],
    timeoutMs: 5 * MINUTE,
    smoke: ['--pages', '3', '--latency', '1', '--runs', '1'],
  },
  {
    name: 'sync-scale',
    args: ['--entries', '100000'],
    timeoutMs: 20 * MINUTE,
    smoke: ['--entries', '200', '--rounds', '1'],
  },
  {
    name: 'body-once',
    args: ['--entries', '100000'],
    timeoutMs: 15 * MINUTE,
    smoke: ['--entries', '200', '--rounds', '1'],
  },
  {
    name: 'history-queries',
    args: [],
    timeoutMs: 15 * MINUTE,
    smoke: ['--calls', '5', '--rounds', '1', '--coworkers', '50', '--runs', '3'],
  },
  { name: 'repeated-uuid-diff', args: ['--k', '20000'], timeoutMs: 5 * MINUTE, smoke: ['--k', '50'] },
  {
    name: 'start-reliability',
    args: ['--entries', '100000', '--requests', '10000'],
    timeoutMs: 20 * MINUTE,
    smoke: ['--entries', '200', '--requests', '50', '--idle-seconds', '1'],
  },
  {
    name: 'as-of-health',
    args: ['--entries', '20000', '--runs', '27'],
    timeoutMs: 10 * MINUTE,
    smoke: ['--entries', '100', '--runs', '3', '--rounds', '1', '--idle-seconds', '1'],
  },
  {
    name: 'deep-history',
    args: ['--entries', '1200', '--runs', '60'],
    timeoutMs: 15 * MINUTE,
    smoke: ['--entries', '40', '--runs', '15'],
    needs: ['postgres'],
  },
  {
    name: 'serve',
    args: [],
    timeoutMs: 15 * MINUTE,
    optional: true,
    smoke: ['--entries', '20', '--duration', '1', '--warmup', '1', '--rounds', '1', '--connections', '4'],
    needs: ['wrk'],
  },
  { name: 'webhooks', args: [], timeoutMs: 5 * MINUTE, smoke: ['--runs', '3'] },
  { name: 'notify', args: null, timeoutMs: 5 * MINUTE, smoke: ['--runs', '3'], goals: false },
  {
    name: 'pages',
    args: [],
    timeoutMs: 15 * MINUTE,
    smoke: ['--calls', '3', '--rounds', '1', '--coworkers', '50', '--runs', '3'],
  },
  {
    name: 'media',
    args: [],
    timeoutMs: 10 * MINUTE,
    optional: true,
    smoke: ['--files', '4', '--latency', '1', '--mb', '1', '--connections', '4', '--duration', '1'],
    needs: ['wrk'],
  },
  {
    name: 'export',
    args: ['--rows', '1000000'],
    timeoutMs: 30 * MINUTE,
    smoke: ['--rows', '500'],
    needs: ['sqlite3', 'time'],
  },
  { name: 'snapshot-memory', args: ['--mib', '200'], timeoutMs: 30 * MINUTE, smoke: ['--mib', '1'] },
  { name: 'cli-startup', args: [], timeoutMs: 5 * MINUTE, smoke: ['--repeat', '1'] },
  {
    name: 'start-latency',
    args: ['--entries', '100000'],
    timeoutMs: 10 * MINUTE,
    smoke: ['--entries', '100', '--seconds', '1'],
    needs: ['wrk'],
  },
  {
    name: 'cli-sync-memory',
    args: null,
    timeoutMs: 10 * MINUTE,
    smoke: ['--entries', '200', '--rounds', '1'],
  },
  { name: 'db-size', args: null, timeoutMs: 10 * MINUTE, smoke: ['--entries', '100'] },
  { name: 'stage-steps', args: null, timeoutMs: 10 * MINUTE, smoke: ['--entries', '200'], goals: false },
  {
    name: 'pg-history-queries',
    args: null,
    timeoutMs: 10 * MINUTE,
    smoke: ['--calls', '5', '--rounds', '1', '--coworkers', '50', '--runs', '3'],
    needs: ['postgres'],
  },
  { name: 'pg-sync', args: null, timeoutMs: 10 * MINUTE, smoke: ['--entries', '200'], needs: ['postgres'] },
  {
    name: 'pg-serve',
    args: null,
    timeoutMs: 10 * MINUTE,
    smoke: ['--entries', '20', '--duration', '1', '--connections', '4', '--rounds', '1'],
    needs: ['postgres', 'wrk'],
    goals: false,
  },
  {
    name: 'failover',
    args: null,
    timeoutMs: 10 * MINUTE,
    smoke: ['--rounds', '1', '--entries', '20'],
    needs: ['postgres'],
    goals: false,
  },
  {
    name: 'instances-ticks',
    args: null,
    timeoutMs: 10 * MINUTE,
    smoke: ['--instances', '2', '--every', '2', '--delay', '1', '--seconds', '5'],
    needs: ['postgres'],
  },
];
