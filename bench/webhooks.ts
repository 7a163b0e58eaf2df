/**
 * Delivery latency after commit: a run with changes is committed (its outbox in the same
 * transaction), and the time until a fast loopback receiver holds the POST is measured, one run at
 * a time so no queue adds to it. Two paths:
 *   - `start`'s worker on its own connection, woken by the store's commit watch (on SQLite, PRAGMA
 *     data_version read every POLL_MS): the sync in another process or thread;
 *   - a worker nudged on the committing connection, as `sync` does right after its commit.
 * Baseline, measured in the same run: a bare undici POST of the same body to the same receiver.
 *
 *   npx tsx bench/webhooks.ts [--runs 300]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { openDatabase } from '../src/db/open.js';
import { silentLogger } from '../src/logger.js';
import { OutboxWorker, POLL_MS } from '../src/outbox/worker.js';
import { webhookChannel } from '../src/webhooks/channel.js';
import { checkGoal, machineLine, millis, ratio } from './lib/report.js';
import { quantile } from './lib/stats.js';
import { withTempDir } from './lib/temp-dir.js';
import { recordRunWithChange } from '../test/helpers/recorded-run.js';

const BENCH = 'webhooks';
/** start's worker: half a poll on average, a whole one at worst, plus the POST. */
const GOAL_POLLED_P99_MS = POLL_MS + 25;
/** sync's nudged worker: claim, sign, POST, a few ms (p50: a shared machine's tail is its neighbours'). */
const GOAL_NUDGED_P50_MS = 5;

const { values } = parseArgs({ options: { runs: { type: 'string', default: '300' } } });
const runs = Number(values.runs);

interface Receiver {
  url: string;
  /** Resolves when the next POST has fully arrived, with its arrival time (performance.now()). */
  next: () => Promise<number>;
  close: () => Promise<void>;
}

async function fastReceiver(): Promise<Receiver> {
  let waiting: ((at: number) => void) | null = null;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(204).end();
      waiting?.(at);
      waiting = null;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    next: () => new Promise((resolve) => (waiting = resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function measure(
  receiver: Receiver,
  commit: () => Promise<unknown>,
  pause: () => number,
  afterCommit: () => void = () => undefined,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs + 10; i++) {
    const arrived = receiver.next();
    await commit();
    const committed = performance.now();
    afterCommit();
    const at = await arrived;
    if (i >= 10) samples.push(at - committed);
    // Let the worker settle (record the attempt, go idle), then commit at a random phase of its
    // poll: real runs come minutes apart, never right behind the previous delivery.
    await new Promise((r) => setTimeout(r, pause()));
  }
  return samples;
}

async function baseline(receiver: Receiver, body: string): Promise<number[]> {
  const agent = new Agent();
  const samples: number[] = [];
  try {
    for (let i = 0; i < runs + 10; i++) {
      const arrived = receiver.next();
      const started = performance.now();
      const response = await request(receiver.url, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await response.body.dump();
      const at = await arrived;
      if (i >= 10) samples.push(at - started);
    }
  } finally {
    await agent.close();
  }
  return samples;
}

function line(name: string, samples: number[], floor: number): string {
  const p50 = quantile(samples, 0.5);
  const p99 = quantile(samples, 0.99);
  return `${name.padEnd(44)} p50 ${millis(p50).padStart(9)}  p99 ${millis(p99).padStart(9)}  p50 / floor ${ratio(p50 / floor)}`;
}

console.log(machineLine());
console.log(`${runs} runs, each committed alone and delivered before the next; poll every ${POLL_MS} ms`);
await withTempDir(async (dir) => {
  const file = join(dir, 'mirror.db');
  const writer = openDatabase(file);
  const workerStore = openDatabase(file);
  const receiver = await fastReceiver();
  const settings = {
    urls: [receiver.url],
    secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    retryScheduleMs: [5_000],
    timeoutMs: 15_000,
  };
  try {
    await recordRunWithChange(writer, [receiver.url]);
    const body = writer.sqlite.prepare('select body from webhook_messages').pluck().get() as string;
    const floor = await baseline(receiver, body);
    const floorP50 = quantile(floor, 0.5);
    // The bootstrap message above is delivered first, outside the samples.
    const polled = new OutboxWorker({
      channels: [webhookChannel({ store: workerStore, settings })],
      logger: silentLogger(),
      store: workerStore,
    });
    const first = receiver.next();
    polled.start();
    await first;
    const polledSamples = await measure(
      receiver,
      () => recordRunWithChange(writer, [receiver.url]),
      () => 10 + Math.random() * POLL_MS,
    );
    await polled.stop();

    const nudged = new OutboxWorker({
      channels: [webhookChannel({ store: writer, settings })],
      logger: silentLogger(),
      store: writer,
    });
    const nudgedSamples = await measure(
      receiver,
      () => recordRunWithChange(writer, [receiver.url]),
      () => 5,
      () => nudged.nudge(),
    );
    await nudged.stop();

    console.log(line('baseline: bare POST of the same body', floor, floorP50));
    console.log(
      `${line("start's worker, another connection's commit", polledSamples, floorP50)}  ${checkGoal(BENCH, "after commit, start's worker p99", Number(quantile(polledSamples, 0.99).toFixed(2)), GOAL_POLLED_P99_MS, ' ms')}`,
    );
    console.log(
      `${line("sync's worker, nudged after its commit", nudgedSamples, floorP50)}  ${checkGoal(BENCH, "after commit, sync's worker p50", Number(quantile(nudgedSamples, 0.5).toFixed(2)), GOAL_NUDGED_P50_MS, ' ms')}`,
    );
  } finally {
    await receiver.close();
    writer.close();
    workerStore.close();
  }
});
