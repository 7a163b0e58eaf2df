/**
 * Notifications (issue 22): messages written per run, and delivery latency after commit. Each of
 * `--runs` real syncs against the simulated upstream edits one coworker, commits its message rows
 * in its own transaction, and the notify worker is poked right after, as a plain `sync` does; the
 * time from the commit to the arrival of the POST at each loopback target (Slack and Discord
 * formats) is measured. Baseline, in the same run: a bare undici POST of the same body.
 *
 *   npx tsx bench/notify.ts [--runs 100]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config/load-config.js';
import { openDatabase } from '../src/db/open.js';
import { PortNotificationOutbox } from '../src/db/notify-outbox.js';
import { outboxPortOf } from '../src/db/sqlite/sql-port.js';
import { outboxOver } from '../src/notify/outbox.js';
import { silentLogger } from '../src/logger.js';
import { sendMessage } from '../src/notify/send.js';
import { notifyWorker } from '../src/notify/channel.js';
import { keyedTargets } from '../src/notify/targets.js';
import { startSimulatedUpstream } from '../src/simulated-upstream/index.js';
import { runSync } from '../src/sync/run-sync.js';
import { machineLine, millis, ratio } from './lib/report.js';
import { quantile } from './lib/stats.js';
import { withTempDir } from './lib/temp-dir.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '100' } } });
const runs = Number(values.runs);

/** A loopback receiver answering 200 "ok" (what Slack answers), noting each POST's arrival. */
async function receiver() {
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(performance.now());
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function baseline(url: string, body: string): Promise<number[]> {
  const agent = new Agent();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const response = await request(url, { dispatcher: agent, method: 'POST', body });
    await response.body.dump();
    samples.push(performance.now() - started);
  }
  await agent.close();
  return samples;
}

const stats = (samples: number[]) =>
  `p50 ${millis(quantile(samples, 0.5)).padStart(9)}  p99 ${millis(quantile(samples, 0.99)).padStart(9)}`;

console.log(machineLine());
await withTempDir(async (dir) => {
  const store = openDatabase(join(dir, 'mirror.db'));
  const upstream = await startSimulatedUpstream({ seed: 5, count: 200 });
  const target = await receiver();
  const urls = `slack+${target.url}/services/T0/B0/x,discord+${target.url}/api/webhooks/1/x`;
  const config = loadConfig({
    UPSTREAM_URL: upstream.url,
    NOTIFY_URLS: urls,
    PUBLIC_BASE_URL: 'https://m.example',
  });
  const syncConfig = { ...config, upstream: { ...config.upstream, target: config.upstream.target! } };
  const worker = notifyWorker({
    outbox: outboxOver(new PortNotificationOutbox(outboxPortOf(store.sqlite))),
    targets: keyedTargets(config.notify.urls, store.endpointKeys),
    send: sendMessage,
    timeoutMs: 15_000,
    logger: silentLogger(),
    pollMs: 60_000,
  });
  const latencies: number[] = [];
  const perRun: number[] = [];
  try {
    await runSync(syncConfig, { store, logger: silentLogger() });
    await worker.poke();
    for (let i = 0; i < runs; i++) {
      upstream.data.edit(1 + (i % 150), 'post');
      const summary = await runSync(syncConfig, { store, logger: silentLogger() });
      const committed = performance.now();
      const before = target.arrivals.length;
      await worker.poke();
      for (const at of target.arrivals.slice(before)) latencies.push(at - committed);
      perRun.push(
        store.sqlite
          .prepare(`select count(*) from webhook_messages where run_id = ? and type like 'notify.%'`)
          .pluck()
          .get(summary.runId) as number,
      );
    }
    const body = store.sqlite
      .prepare('select body from webhook_messages order by id desc')
      .pluck()
      .get() as string;
    const floor = await baseline(`${target.url}/services/T0/B0/x`, body);
    const targets = config.notify.urls?.length ?? 0;
    console.log(
      `${runs} runs with one change each, ${targets} targets: messages per run ${quantile(perRun, 0.5)} ` +
        `(min ${Math.min(...perRun)}, max ${Math.max(...perRun)}), deliveries per run ${quantile(perRun, 0.5) * targets}`,
    );
    console.log(`${'baseline: bare POST of a message body'.padEnd(46)} ${stats(floor)}`);
    console.log(
      `${'after commit, worker poked (a plain sync)'.padEnd(46)} ${stats(latencies)}  ` +
        `p50 / floor ${ratio(quantile(latencies, 0.5) / quantile(floor, 0.5))}  (${latencies.length} deliveries)`,
    );
  } finally {
    await worker.stop();
    await target.close();
    await upstream.close();
    store.close();
  }
});
