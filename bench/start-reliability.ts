/**
 * What a sync and many clients cost the server of `start` (issue 8), on the built CLI as users run
 * it, each figure against a baseline measured in the same run:
 * (a) /healthz p99 while `start` syncs `--entries` entries (its sync runs in a child process),
 *     against /healthz p99 of the same process idle right after;
 * (b) the server's RSS after `--requests` distinct list requests (`?x=i`, pages cycling), against
 *     its RSS just before them.
 * The simulated upstream runs in a process of its own, so serving pages does not delay this
 * process's health client.
 *
 *   npm run build && npx tsx bench/start-reliability.ts [--entries 100000] [--requests 10000]
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startSimulatedUpstream } from '../src/simulated-upstream/index.js';
import { LIST_PATH } from '../src/upstream/contract.js';
import { healthLatencies, lineReader, stop } from './lib/cli-process.js';
import { checkGoal, machineLine, megabytes, millis, ratio, seconds } from './lib/report.js';
import { quantile } from './lib/stats.js';
import { withTempDir } from './lib/temp-dir.js';

const GOAL_HEALTH_P99_MS = 10;
const SELF = fileURLToPath(import.meta.url);
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '10000' },
    'idle-seconds': { type: 'string', default: '5' },
    // Internal: run as the upstream.
    upstream: { type: 'boolean', default: false },
  },
});
const entries = Number(values.entries);

type LineWaiter = ReturnType<typeof lineReader>;

async function rss(agent: Agent, url: string): Promise<number> {
  const res = await request(`${url}/metrics`, { dispatcher: agent });
  const text = await res.body.text();
  const match = /^coworker_mirror_process_resident_memory_bytes (\d+)/m.exec(text);
  return Number(match?.[1] ?? Number.NaN);
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) {
    const built = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  console.log(machineLine());
  const upstreamProc = spawn(
    process.execPath,
    ['--import', 'tsx', SELF, '--upstream', '--entries', String(entries)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const upstreamUrl = (JSON.parse(await lineReader(upstreamProc)(/"url"/, 120_000)) as { url: string }).url;
    await withTempDir((dir) => measure(upstreamUrl, join(dir, 'mirror.db')));
  } finally {
    await stop(upstreamProc);
  }
}

async function measure(upstreamUrl: string, db: string): Promise<void> {
  const start = spawn(process.execPath, ['--max-semi-space-size=2', CLI, 'start', '--port', '0'], {
    // stderr too: the sync child `start` runs logs there ("sync succeeded").
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      UPSTREAM_URL: upstreamUrl,
      DATABASE_PATH: db,
      SYNC_CRON: '0 0 1 1 *',
      SYNC_MAX_PAGES: '1000000',
      LOG_LEVEL: 'info',
    },
  });
  const agent = new Agent({ connections: 1 });
  try {
    const waitFor = lineReader(start);
    const started = waitFor(/"msg":"coworker-mirror started"/, 60_000);
    const url = (JSON.parse(await started) as { url: string }).url;
    await healthWhileSyncing(agent, url, waitFor);
    await rssAfterListRequests(agent, url);
  } finally {
    await agent.close();
    await stop(start);
  }
}

/** (a): /healthz p99 during the sync `start` runs at boot, against the same process idle after. */
async function healthWhileSyncing(agent: Agent, url: string, waitFor: LineWaiter): Promise<void> {
  let synced = false;
  const syncStarted = performance.now();
  const done = waitFor(/"msg":"sync (succeeded|failed)"/, 30 * 60_000).then((line) => {
    synced = true;
    if (line.includes('sync failed')) throw new Error(`the sync failed: ${line}`);
  });
  const during = await healthLatencies(agent, url, () => synced);
  await done;
  const syncMs = performance.now() - syncStarted;
  const idleUntil = performance.now() + Number(values['idle-seconds']) * 1000;
  const idle = await healthLatencies(agent, url, () => performance.now() > idleUntil);
  const [p99During, p99Idle] = [quantile(during, 0.99), quantile(idle, 0.99)];
  console.log(`sync of ${entries.toLocaleString('en-US')} entries in start: ${seconds(syncMs)}`);
  console.log(
    `baseline: /healthz idle, p99 ${millis(p99Idle)} (p50 ${millis(quantile(idle, 0.5))}, ${idle.length} requests)`,
  );
  console.log(
    `/healthz while syncing: p99 ${millis(p99During)} (p50 ${millis(quantile(during, 0.5))}, max ${millis(Math.max(...during))}, ` +
      `${during.length} requests), ratio ${ratio(p99During / p99Idle)} ` +
      checkGoal('start-reliability', '/healthz p99 during a sync', p99During, GOAL_HEALTH_P99_MS, ' ms'),
  );
}

/** (b): the server's RSS after `--requests` distinct list requests, against its RSS just before. */
async function rssAfterListRequests(agent: Agent, url: string): Promise<void> {
  const requests = Number(values.requests);
  const before = await rss(agent, url);
  const pages = Math.ceil(entries / 8);
  const listAgent = new Agent({ connections: 8 });
  let next = 0;
  const worker = async () => {
    while (next < requests) {
      const i = next++;
      const res = await request(`${url}${LIST_PATH}?page=${(i % pages) + 1}&x=${i}`, {
        dispatcher: listAgent,
      });
      await res.body.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  await listAgent.close();
  const after = await rss(agent, url);
  console.log(`baseline: server RSS before the list requests ${megabytes(before)}`);
  console.log(
    `server RSS after ${requests.toLocaleString('en-US')} distinct list requests: ${megabytes(after)} ` +
      `(+${megabytes(after - before)}), ratio ${ratio(after / before)}`,
  );
}

if (values.upstream) {
  const upstream = await startSimulatedUpstream({ seed: 8, count: entries });
  process.stdout.write(`${JSON.stringify({ url: upstream.url })}\n`);
  process.on('SIGTERM', () => void upstream.close().then(() => process.exit(0)));
} else {
  await main();
}
