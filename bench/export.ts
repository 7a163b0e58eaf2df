/**
 * Exports of the whole change history against the sqlite3 shell's export of the same rows: about
 * `--rows` change rows as syncs write them (bench/lib/history-fixture.ts), then, each in its own
 * process timed by GNU time (wall time, CPU time and peak RSS): the shell's exports (SHELL_*_SQL
 * below), the built CLI's
 * `changes --json` / `--csv --limit all`, and the built server's `/api/mirror/changes/export.jsonl`
 * and `.csv` fetched to a file (the server's peak RSS read from /proc after each export). Goals:
 * each export within 2× the shell's time, and its process's memory flat (same peak at 1/10 the rows).
 *
 *   npx tsx bench/export.ts [--rows 1000000]
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/open.js';
import { BUILT_CLI, ensureBuilt } from '../test/helpers/process.js';
import { lineReader, stop } from './lib/cli-process.js';
import { buildHistory } from './lib/history-fixture.js';
import { checkGoal, machineLine, megabytes, ratio, seconds } from './lib/report.js';
import { withTempDir } from './lib/temp-dir.js';

const BENCH = 'export';
const GOAL_TIME_RATIO = 2;

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' } } });
const rows = Number(values.rows);

interface Measured {
  ms: number;
  /**
   * CPU time (user + system) of the exporting process: on a machine shared with other jobs the wall
   * time's ratio moves with the load from run to run, the CPU time's far less.
   */
  cpuMs: number;
  peakRss: number;
  bytes: number;
}

/**
 * Runs `argv` under GNU time with stdout to `out`; its wall time, CPU time and peak RSS. The wall
 * time is this process's clock around the child, not GNU time's `%e`: that one counts in hundredths
 * of a second, so a tiny export's shell would take "0.00 s" and every ratio over it be infinite.
 */
function timedProcess(argv: string[], out: string, env: NodeJS.ProcessEnv = process.env): Measured {
  const report = `${out}.time`;
  const started = performance.now();
  execFileSync('bash', ['-c', '/usr/bin/time -f "%U %S %M" -o "$0" "${@:2}" > "$1"', report, out, ...argv], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const ms = performance.now() - started;
  const [user, system, kb] = readFileSync(report, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
  return {
    ms,
    cpuMs: ((user ?? NaN) + (system ?? NaN)) * 1000,
    peakRss: (kb ?? NaN) * 1024,
    bytes: statSync(out).size,
  };
}

/** CPU time so far of process `pid` (utime + stime in /proc, in the kernel's 100 Hz ticks). */
function cpuMsOf(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The shell's exports of the same rows, three ways. A change's time is its run's (migration
 * change_time_from_run), and an added, returned or removed change names the version holding its
 * entry instead of copying it (migration body_once):
 * - `table`: the table as stored, the entries of those changes null: the cheapest read there is;
 * - `values`: every cell of a JSON Lines row, the entries read from their versions (its baseline);
 * - `cells`: those and the coworker's name at the change, read from the entry as the CSV's
 *   subject is (its baseline; the CSV's sentence, worded in code, has no SQL counterpart).
 */
const SHELL_TABLE_SQL =
  'select c.id, c.run_id, r.finished_at as at, c.uuid, c.slot, c.kind, c.field, c.old_value, c.new_value ' +
  'from changes c join runs r on r.id = c.run_id order by c.id desc';
const SHELL_VALUES = `c.id, c.run_id, r.finished_at as at, c.uuid, c.slot, c.kind, c.field,
  coalesce(c.old_value, case when c.kind = 'removed' then v.body end) as old_value,
  coalesce(c.new_value, case when c.kind <> 'removed' then v.body end) as new_value`;
const SHELL_VALUES_SQL = `select ${SHELL_VALUES}
  from changes c join runs r on r.id = c.run_id left join versions v on v.id = c.version_id order by c.id desc`;
const SHELL_CELLS_SQL = `select ${SHELL_VALUES},
  (select x.body ->> '$.name' from versions x
    where x.uuid = c.uuid and x.slot = c.slot and x.valid_from_run <= c.run_id
    order by x.valid_from_run desc limit 1) as name
  from changes c join runs r on r.id = c.run_id left join versions v on v.id = c.version_id order by c.id desc`;

/**
 * About `count` change rows as syncs write them (bench/lib/history-fixture.ts): a tenth added by the
 * first run, the rest field changes of 3,000 coworkers a run, three fields each.
 */
function buildDatabase(file: string, count: number): number {
  const store = openDatabase(file);
  for (const pragma of ['synchronous = OFF', 'cache_size = -262144']) store.sqlite.pragma(pragma);
  const coworkers = Math.max(10, Math.round(count / 10));
  const editsPerRun = Math.min(3000, coworkers);
  const runs = 1 + Math.max(1, Math.round((count - coworkers) / (editsPerRun * 3)));
  const { changeRows } = buildHistory(store, { coworkers, runs, editsPerRun, fieldsPerEdit: 3 });
  store.close();
  return changeRows;
}

/** Resolves once process `pid` has used under 20 ms of CPU in half a second (at most a minute). */
async function untilIdle(pid: number | undefined): Promise<void> {
  for (let waited = 0, last = cpuMsOf(pid); waited < 60_000; waited += 500) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = cpuMsOf(pid);
    if (now - last < 20) return;
    last = now;
  }
}

/** The built server over `db`; each export fetched by curl to a file, the server's VmHWM after it. */
async function httpExports(db: string, dir: string): Promise<Record<'jsonl' | 'csv', Measured>> {
  const child = spawn(process.execPath, [BUILT_CLI, 'serve', '--port', '0'], {
    env: { ...process.env, DATABASE_PATH: db, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const line = await lineReader(child)(/"url"/, 60_000);
    const url = (JSON.parse(line) as { url: string }).url;
    const result: Partial<Record<'jsonl' | 'csv', Measured>> = {};
    for (const format of ['jsonl', 'csv'] as const) {
      // The server checks the whole file at start (quick_check, in a worker): not the export's cost.
      await untilIdle(child.pid);
      const cpuBefore = cpuMsOf(child.pid);
      const fetched = timedProcess(
        ['curl', '-sf', `${url}/api/mirror/changes/export.${format}`],
        join(dir, `http.${format}`),
      );
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024;
      // The server's CPU, not curl's: what the export costs the mirror.
      result[format] = { ...fetched, cpuMs: cpuMsOf(child.pid) - cpuBefore, peakRss: hwm };
    }
    return result as Record<'jsonl' | 'csv', Measured>;
  } finally {
    await stop(child);
  }
}

function runAll(db: string, dir: string) {
  const env = { ...process.env, DATABASE_PATH: db };
  return {
    shellTable: timedProcess(['sqlite3', '-csv', db, SHELL_TABLE_SQL], join(dir, 'shell-table.csv')),
    shellJson: timedProcess(['sqlite3', '-json', db, SHELL_VALUES_SQL], join(dir, 'shell.json')),
    shellCsv: timedProcess(['sqlite3', '-csv', db, SHELL_CELLS_SQL], join(dir, 'shell.csv')),
    cliJson: timedProcess(
      ['node', BUILT_CLI, 'changes', '--json', '--limit', 'all'],
      join(dir, 'cli.jsonl'),
      env,
    ),
    cliCsv: timedProcess(
      ['node', BUILT_CLI, 'changes', '--csv', '--limit', 'all'],
      join(dir, 'cli.csv'),
      env,
    ),
  };
}

function line(name: string, m: Measured, shell: Measured, small?: Measured): string {
  const flat = small
    ? `, peak at 1/10 the rows ${megabytes(small.peakRss)} (${ratio(m.peakRss / small.peakRss)}×)`
    : '';
  return (
    `${name.padEnd(22)} ${seconds(m.ms).padStart(8)} ${seconds(m.cpuMs).padStart(8)} ${megabytes(m.peakRss).padStart(9)} ${megabytes(m.bytes).padStart(9)}` +
    `  time ${ratio(m.ms / shell.ms)}× the shell's, CPU ${ratio(m.cpuMs / shell.cpuMs)}×, peak RSS ${ratio(m.peakRss / shell.peakRss)}× the shell's${flat}`
  );
}

console.log(machineLine());
ensureBuilt();
await withTempDir(async (dir) => {
  const small = join(dir, 'small.db');
  const large = join(dir, 'large.db');
  const started = performance.now();
  const smallRows = buildDatabase(small, Math.round(rows / 10));
  const largeRows = buildDatabase(large, rows);
  console.log(
    `export: built ${largeRows.toLocaleString('en-US')} change rows (and ${smallRows.toLocaleString('en-US')}) in ${seconds(performance.now() - started)}`,
  );
  const tenth = { ...runAll(small, dir), ...(await httpExports(small, dir)) };
  const full = { ...runAll(large, dir), ...(await httpExports(large, dir)) };
  console.log(
    `${''.padEnd(22)} ${'time'.padStart(8)} ${'CPU'.padStart(8)} ${'peak RSS'.padStart(9)} ${'bytes'.padStart(9)}`,
  );
  console.log(line('sqlite3 -csv table', full.shellTable, full.shellTable));
  console.log(line('sqlite3 -json values', full.shellJson, full.shellJson));
  console.log(line('sqlite3 -csv cells', full.shellCsv, full.shellCsv));
  const cases = [
    ['changes --json', full.cliJson, full.shellJson, tenth.cliJson],
    ['changes --csv', full.cliCsv, full.shellCsv, tenth.cliCsv],
    ['HTTP export.jsonl', full.jsonl, full.shellJson, tenth.jsonl],
    ['HTTP export.csv', full.csv, full.shellCsv, tenth.csv],
  ] as const;
  for (const [name, m, shell, tenthOf] of cases) {
    console.log(
      `${line(name, m, shell, tenthOf)} ${checkGoal(BENCH, `${name} time / sqlite3`, m.ms / shell.ms, GOAL_TIME_RATIO, '×')}` +
        ` (${ratio(m.ms / full.shellTable.ms)}× the table's dump)`,
    );
  }
});
