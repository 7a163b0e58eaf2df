/**
 * What time travel costs the server's health check (issue 8 §3: "keep a health check under 10 ms
 * p99 while it happens"), on the built CLI's `serve` as users run it: one client fetches
 * `?as_of=` of each past run in turn (`--runs` runs of `--entries` entries, so the past snapshots
 * outgrow AS_OF_CACHE_BYTES and each is rebuilt) while another samples /healthz; the baseline is
 * /healthz p99 of the same process idle right after.
 *
 *   npm run build && npx tsx bench/as-of-health.ts [--entries 20000] [--runs 27] [--rounds 3]
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { openDatabase } from '../src/db/open.js';
import { LIST_PATH } from '../src/upstream/contract.js';
import { healthLatencies, lineReader, stop } from './lib/cli-process.js';
import { buildHistory } from './lib/history-fixture.js';
import { checkGoal, machineLine, millis, ratio, seconds } from './lib/report.js';
import { quantile } from './lib/stats.js';
import { withTempDir } from './lib/temp-dir.js';

const GOAL_HEALTH_P99_MS = 10;
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '27' },
    rounds: { type: 'string', default: '3' },
    'idle-seconds': { type: 'string', default: '5' },
  },
});
const entries = Number(values.entries);
const pastRuns = Number(values.runs);

/** `pastRuns` runs behind the current one; each later run edits 200 coworkers, 2 fields each. */
function pastRunTimes(db: string): string[] {
  const store = openDatabase(db);
  try {
    const started = performance.now();
    buildHistory(store, { coworkers: entries, runs: pastRuns + 1, editsPerRun: 200, fieldsPerEdit: 2 });
    console.log(
      `history: ${pastRuns + 1} runs of ${entries.toLocaleString('en-US')} entries built in ${seconds(performance.now() - started)}`,
    );
    const rows = store.sqlite
      .prepare('select finished_at as at from runs order by id limit ?')
      .all(pastRuns) as { at: string }[];
    return rows.map((r) => r.at);
  } finally {
    store.close();
  }
}

async function measure(db: string): Promise<void> {
  const times = pastRunTimes(db);
  const server = spawn(process.execPath, ['--max-semi-space-size=2', CLI, 'serve', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, DATABASE_PATH: db, LOG_LEVEL: 'info' },
  });
  const health = new Agent({ connections: 1 });
  const travel = new Agent({ connections: 1 });
  try {
    const url = (
      JSON.parse(await lineReader(server)(/"msg":"serving the mirror"/, 60_000)) as { url: string }
    ).url;
    const asOf: number[] = [];
    let travelling = true;
    const traveller = (async () => {
      try {
        for (let round = 0; round < Number(values.rounds); round++) {
          for (const at of times) {
            const t = performance.now();
            const res = await request(`${url}${LIST_PATH}?as_of=${encodeURIComponent(at)}`, {
              dispatcher: travel,
            });
            await res.body.arrayBuffer();
            asOf.push(performance.now() - t);
            if (res.statusCode !== 200) throw new Error(`?as_of=${at} answered ${res.statusCode}`);
          }
        }
      } finally {
        travelling = false;
      }
    })();
    const during = await healthLatencies(health, url, () => !travelling);
    await traveller;
    const idleUntil = performance.now() + Number(values['idle-seconds']) * 1000;
    const idle = await healthLatencies(health, url, () => performance.now() > idleUntil);
    const [p99During, p99Idle] = [quantile(during, 0.99), quantile(idle, 0.99)];
    console.log(
      `?as_of= of ${times.length} past runs × ${values.rounds} rounds: ${asOf.length} requests, ` +
        `p50 ${millis(quantile(asOf, 0.5))}, max ${millis(Math.max(...asOf))}`,
    );
    console.log(
      `baseline: /healthz idle, p99 ${millis(p99Idle)} (p50 ${millis(quantile(idle, 0.5))}, ${idle.length} requests)`,
    );
    console.log(
      `/healthz while cycling ?as_of=: p99 ${millis(p99During)} (p50 ${millis(quantile(during, 0.5))}, ` +
        `max ${millis(Math.max(...during))}, ${during.length} requests), ratio ${ratio(p99During / p99Idle)} ` +
        checkGoal('as-of-health', '/healthz p99 while cycling ?as_of=', p99During, GOAL_HEALTH_P99_MS, ' ms'),
    );
  } finally {
    await health.close();
    await travel.close();
    await stop(server);
  }
}

if (!existsSync(CLI)) {
  const built = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
}
console.log(machineLine());
await withTempDir((dir) => measure(join(dir, 'mirror.db')));
