/**
 * Failover: from SIGKILL of the `start` instance holding the sync lock (it and its sync child, as a
 * host dying would) to the next successful run on another instance sharing the same PostgreSQL.
 * Two built `start` processes syncing every second (SYNC_CRON="* * * * * *") against a simulated
 * upstream of `--entries` coworkers whose page 2 stalls until the holder is killed. Prints, per
 * round and as the median, the failover split into the wait for the survivor's lock (its next tick)
 * and its run, beside the baseline measured in the same run: a plain sync of the same listing.
 *
 *   npx tsx bench/failover.ts [--rounds 5] [--entries 1000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { startSimulatedUpstream, type SimulatedUpstream } from '../src/simulated-upstream/index.js';
import { BUILT_CLI, ensureBuilt } from '../test/helpers/process.js';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres.js';
import { lineReader } from './lib/cli-process.js';
import { machineLine } from './lib/report.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, entries: { type: 'string', default: '1000' } },
});
const rounds = Number(values.rounds);
const entries = Number(values.entries);

interface Start {
  child: ChildProcess;
  waitFor: (pattern: RegExp, timeoutMs: number) => Promise<string>;
}

function startInstance(database: string, upstream: string): Start {
  const child = spawn(process.execPath, [BUILT_CLI, 'start', '--port', '0'], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: database,
      UPSTREAM_URL: upstream,
      SYNC_CRON: '* * * * * *',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, waitFor: lineReader(child) };
}

function childrenOf(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(/\s+/).map(Number);
  } catch {
    return [];
  }
}

interface RunRow {
  id: number;
  status: string;
  started: Date;
  finished: Date | null;
  holderPid: number | null;
}

async function runs(admin: pg.Pool): Promise<RunRow[]> {
  const { rows } = await admin.query<RunRow>(
    'select id::int as id, status, started_at::timestamptz as started, finished_at::timestamptz as finished, holder_pid as "holderPid" from runs order by id',
  );
  return rows;
}

async function until<T>(check: () => Promise<T | undefined>, everyMs = 10): Promise<T> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error('timed out');
}

interface Round {
  /** SIGKILL → the survivor's run began (it took the lock). */
  lockMs: number;
  /** SIGKILL → that run succeeded. */
  failoverMs: number;
  /** The survivor's run alone: the baseline a failover cannot beat. */
  runMs: number;
}

async function round(server: PostgresServer, upstream: SimulatedUpstream): Promise<Round> {
  const name = await server.createDatabase('failover');
  const admin = server.admin(name);
  upstream.faults.set({ hang: { page: 2 } });
  const instances = [
    startInstance(server.url(name), upstream.url),
    startInstance(server.url(name), upstream.url),
  ];
  try {
    await Promise.all(instances.map((i) => i.waitFor(/"msg":"coworker-mirror started"/, 120_000)));
    const held = await until(async () => (await runs(admin)).find((r) => r.status === 'running'), 50);
    // The lock is the sync child's: its parent `start` is the instance to kill.
    const holder = await until(
      () => Promise.resolve(instances.find((i) => childrenOf(i.child.pid).includes(held.holderPid ?? -1))),
      20,
    );
    upstream.faults.clear('hang');
    for (const pid of childrenOf(holder.child.pid)) process.kill(pid, 'SIGKILL');
    holder.child.kill('SIGKILL');
    const killedAt = new Date();
    const next = await until(async () =>
      (await runs(admin)).find((r) => r.id > held.id && r.status === 'succeeded'),
    );
    const finished = next.finished ?? next.started;
    return {
      lockMs: next.started.getTime() - killedAt.getTime(),
      failoverMs: finished.getTime() - killedAt.getTime(),
      runMs: finished.getTime() - next.started.getTime(),
    };
  } finally {
    for (const i of instances) i.child.kill('SIGKILL');
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  ensureBuilt();
  const upstream = await startSimulatedUpstream({ seed: 7, count: entries, pageSize: 100 });
  const server = await startPostgres();
  const results: Round[] = [];
  try {
    for (let i = 1; i <= rounds; i++) {
      const r = await round(server, upstream);
      results.push(r);
      console.log(
        `round ${i}: failover ${r.failoverMs} ms = lock taken after ${r.lockMs} ms + run ${r.runMs} ms`,
      );
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
  console.log(machineLine());
  const failover = median(results.map((r) => r.failoverMs));
  const run = median(results.map((r) => r.runMs));
  console.log(
    `failover (SIGKILL of the lock holder → next successful run elsewhere), median of ${rounds}: ${failover} ms` +
      ` (lock taken after ${median(results.map((r) => r.lockMs))} ms; baseline, the run alone: ${run} ms;` +
      ` ratio ${(failover / run).toFixed(2)}x) — ${entries} entries, SYNC_CRON every second`,
  );
}

await main();
