/**
 * What a schedule costs the upstream with several instances: `--instances` built `start` processes
 * on one PostgreSQL, `SYNC_CRON` every `--every` seconds with `SYNC_RANDOM_DELAY` of `--delay`
 * seconds, for `--seconds`; then, as the baseline measured in the same run, one instance alone with
 * the same settings. Counted from the first stored listing on, prints ticks elapsed, runs recorded
 * and crawls the upstream served (requests for page 2, read once a crawl) for each, and crawls per
 * tick. Goal: at most 1 with N instances (they cost the upstream what one costs).
 *
 *   npx tsx bench/instances-ticks.ts [--instances 3] [--every 10] [--delay 8] [--seconds 90]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { startSimulatedUpstream, type SimulatedUpstream } from '../src/simulated-upstream/index.js';
import { LIST_PATH } from '../src/upstream/contract.js';
import { BUILT_CLI, ensureBuilt } from '../test/helpers/process.js';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres.js';
import { lineReader, stop } from './lib/cli-process.js';
import { checkGoal, machineLine, ratio } from './lib/report.js';

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '3' },
    every: { type: 'string', default: '10' },
    delay: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '90' },
  },
});
const instances = Number(values.instances);
const every = Number(values.every);
const delay = Number(values.delay);
const seconds = Number(values.seconds);

interface Outcome {
  ticks: number;
  runs: number;
  crawls: number;
  failedLines: number;
}

function startInstance(database: string, upstream: string): ChildProcess {
  return spawn(process.execPath, [BUILT_CLI, 'start', '--port', '0'], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: database,
      UPSTREAM_URL: upstream,
      SYNC_CRON: `*/${every} * * * * *`,
      SYNC_RANDOM_DELAY: `${delay}s`,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Counts `sync failed` lines on both streams of a child, for as long as it runs. */
function failedLines(child: ChildProcess): () => number {
  let count = 0;
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      count += chunk.toString('utf8').split('sync failed').length - 1;
    });
  }
  return () => count;
}

async function measure(server: PostgresServer, upstream: SimulatedUpstream, n: number): Promise<Outcome> {
  const name = await server.createDatabase('ticks');
  const admin = server.admin(name);
  const children = Array.from({ length: n }, () => startInstance(server.url(name), upstream.url));
  const failed = children.map(failedLines);
  try {
    await Promise.all(children.map((c) => lineReader(c)(/started"/, 60_000)));
    // Counted from the first stored listing on: the start-up sync of an empty mirror is not a tick.
    while ((await admin.query("select 1 from runs where status = 'succeeded'")).rowCount === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const before = upstream.requests.length;
    const from = new Date();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const ticks = Math.floor(Date.now() / (every * 1000)) - Math.floor(from.getTime() / (every * 1000));
    await Promise.all(children.map(stop));
    const { rows } = await admin.query<{ n: number }>(
      'select count(*)::int as n from runs where started_at::timestamptz > $1',
      [from.toISOString()],
    );
    const crawls = upstream.requests
      .slice(before)
      .filter((r) => r.method === 'GET' && r.url === `${LIST_PATH}?page=2`).length;
    return { ticks, runs: rows[0]?.n ?? 0, crawls, failedLines: failed.reduce((s, f) => s + f(), 0) };
  } finally {
    for (const c of children) c.kill('SIGKILL');
  }
}

function line(label: string, o: Outcome): string {
  return `${label}: ${o.ticks} ticks, ${o.runs} runs, ${o.crawls} crawls, ${o.failedLines} "sync failed" lines`;
}

async function main(): Promise<void> {
  ensureBuilt();
  // Three pages of eight: a crawl reads page 2 exactly once.
  const upstream = await startSimulatedUpstream({ seed: 11, count: 20, pageSize: 8 });
  const server = await startPostgres();
  try {
    console.log(machineLine());
    console.log(`every ${every} s, random delay up to ${delay} s, ${seconds} s each`);
    const many = await measure(server, upstream, instances);
    console.log(line(`${instances} instances`, many));
    const one = await measure(server, upstream, 1);
    console.log(line('1 instance (baseline)', one));
    const perTick = (o: Outcome) => o.crawls / Math.max(1, o.ticks);
    // One instance may miss a tick while its sync process is busy: the goal is on the N instances
    // alone, at most one crawl a tick; the baseline shows what one instance did in the same run.
    console.log(
      `crawls per tick: ${ratio(perTick(many))} with ${instances}, ${ratio(perTick(one))} with one; ` +
        checkGoal('instances-ticks', `crawls per tick with ${instances} instances`, perTick(many), 1),
    );
  } finally {
    await server.stop();
    await upstream.close();
  }
}

await main();
