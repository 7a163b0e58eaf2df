/**
 * How soon `start` answers on a 100,000-entry database (issue 21, section 4), on the built CLI:
 * spawn → listening (its "started" record), listening → /healthz answered, listening → the list
 * endpoint answered (goal ≤ 1 s each, whatever the size); then the CPU the server spends per request
 * of `/`, `/changes/` and the Atom feed against the list endpoint's, read from /proc while wrk
 * (1 thread, 4 connections, pinned off nothing: wrk costs ~10× less per request than any page) runs.
 * The database is written straight through the store's tables (bench/lib/history-fixture.ts).
 *
 *   npm run build && npx tsx bench/start-latency.ts [--entries 100000] [--seconds 3] [--cli other/dist/cli.js]
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/open.js';
import { LIST_PATH } from '../src/upstream/contract.js';
import { lineReader, stop } from './lib/cli-process.js';
import { buildHistory } from './lib/history-fixture.js';
import { checkGoal, machineLine, millis, ratio, seconds } from './lib/report.js';
import { withTempDir } from './lib/temp-dir.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '3' },
    cli: { type: 'string' },
  },
});
const CLI = values.cli ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const entries = Number(values.entries);
const TICKS_PER_SECOND = 100;

/** The first moment `url` answers 200, polling as fast as the loop allows. */
async function firstAnswer(url: string): Promise<number> {
  for (;;) {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return performance.now();
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** User + system CPU of a process, in ms (/proc/<pid>/stat fields 14 and 15). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

function cpuPerRequest(pid: number, url: string): { ms: number; requests: number } {
  const before = cpuMs(pid);
  const wrk = spawnSync('wrk', ['-t1', '-c4', `-d${values.seconds}s`, url], { encoding: 'utf8' });
  const after = cpuMs(pid);
  const requests = Number(/(\d+) requests in/.exec(wrk.stdout)?.[1] ?? NaN);
  return { ms: (after - before) / requests, requests };
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is missing: apt-get install wrk');
  await withTempDir(async (dir) => {
    const file = join(dir, 'mirror.db');
    const db = openDatabase(file);
    buildHistory(db, { coworkers: entries, runs: 2, editsPerRun: 100, fieldsPerEdit: 2 });
    db.close();
    const spawned = performance.now();
    const child = spawn(process.execPath, ['--max-semi-space-size=2', CLI, 'start', '--port', '0'], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_PATH: file,
        // The fixture's upstream; nothing listens there, so the start-up sync fails fast and apart.
        UPSTREAM_URL: 'http://127.0.0.1:8000',
        SYNC_CRON: '0 0 1 1 *',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const waitFor = lineReader(child);
      const started = await waitFor(/coworker-mirror started/, 120_000);
      const listening = performance.now();
      const base = (JSON.parse(started) as { url: string }).url;
      const [health, list] = await Promise.all([
        firstAnswer(`${base}/healthz`),
        firstAnswer(`${base}${LIST_PATH}`),
      ]);
      report(spawned, listening, health, list);
      // The pages wait for the directory; measure them once it is built.
      await firstAnswer(`${base}/coworkers/`);
      cpuReport(child.pid ?? 0, base);
    } finally {
      await stop(child);
    }
  });
}

function report(spawned: number, listening: number, health: number, list: number): void {
  console.log(machineLine());
  console.log(`start on ${entries.toLocaleString('en-US')} entries, ${CLI}`);
  console.log(`spawn → listening            ${seconds(listening - spawned)}`);
  const h = health - listening;
  const l = list - listening;
  console.log(
    `listening → /healthz 200     ${millis(h)} ${checkGoal('start-latency', 'listening → /healthz', h / 1000, 1, ' s')}`,
  );
  console.log(
    `listening → list 200         ${millis(l)} ${checkGoal('start-latency', 'listening → list', l / 1000, 1, ' s')}`,
  );
}

function cpuReport(pid: number, base: string): void {
  const paths = { list: LIST_PATH, '/': '/', '/changes/': '/changes/', atom: '/api/mirror/changes.atom' };
  const results = Object.entries(paths).map(
    ([name, path]) => [name, cpuPerRequest(pid, `${base}${path}`)] as const,
  );
  const list = results[0]?.[1].ms ?? NaN;
  console.log(`CPU per request (wrk -t1 -c4 -d${values.seconds}s; server CPU from /proc ÷ requests)`);
  for (const [name, r] of results) {
    console.log(
      `${name.padEnd(10)} ${millis(r.ms).padStart(10)}  ${ratio(r.ms / list)}× list  (${r.requests} requests)`,
    );
  }
}

await main();
