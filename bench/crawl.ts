/**
 * Crawl latency bench: a listing of `--pages` pages behind a simulated upstream that waits
 * `--latency` ms before every response. A crawl cannot beat latency × rounds, where rounds is page 1
 * plus the remaining pages spread over `concurrency` workers; the ratio to that floor is the figure.
 *
 *   npx tsx bench/crawl.ts [--concurrency N] [--pages 100] [--latency 50] [--runs 3]
 */
import { parseArgs } from 'node:util';
import { startSimulatedUpstream, type SimulatedUpstream } from '../src/simulated-upstream/index.js';
import { crawlListing } from './lib/client.js';
import { checkGoal, machineLine, ratio, seconds } from './lib/report.js';
import { benchSyncSettings } from './lib/settings.js';
import { median, timed } from './lib/stats.js';

const PAGE_SIZE = 8;
const DEFAULT_CONCURRENCY = 4;
const GOAL_RATIO = 1.2;

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string' },
    pages: { type: 'string', default: '100' },
    latency: { type: 'string', default: '50' },
    runs: { type: 'string', default: '3' },
  },
});
const pages = Number(values.pages);
const latency = Number(values.latency);
const runs = Number(values.runs);
const concurrencies =
  values.concurrency === undefined ? [1, DEFAULT_CONCURRENCY] : [Number(values.concurrency)];

async function crawlOnce(upstream: SimulatedUpstream, concurrency: number): Promise<number> {
  const settings = benchSyncSettings(upstream.url, {
    SYNC_CONCURRENCY: String(concurrency),
    SYNC_MAX_PAGES: String(pages),
    SYNC_MAX_ENTRIES: String(pages * PAGE_SIZE),
  });
  const { ms, value } = await timed(() => crawlListing(settings));
  if (value.pages !== pages) throw new Error(`crawled ${value.pages} pages, expected ${pages}`);
  return ms;
}

console.log(machineLine());
const upstream = await startSimulatedUpstream({ seed: 7, count: pages * PAGE_SIZE, pageSize: PAGE_SIZE });
try {
  upstream.faults.set({ latency });
  console.log(
    `crawl: ${pages} pages of ${PAGE_SIZE}, ${latency} ms latency per response, median of ${runs} runs`,
  );
  // Warms the JIT and the page cache, so the first measured run is not the odd one out.
  await crawlOnce(upstream, DEFAULT_CONCURRENCY);
  for (const concurrency of concurrencies) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push(await crawlOnce(upstream, concurrency));
    const time = median(times);
    const rounds = 1 + Math.ceil((pages - 1) / concurrency);
    const floor = latency * rounds;
    const r = time / floor;
    const runsText = times.map(seconds).join(', ');
    const tail =
      concurrency === DEFAULT_CONCURRENCY
        ? ` ${checkGoal('crawl', `crawl c=${concurrency} time / floor`, r, GOAL_RATIO, '×')}`
        : '';
    console.log(
      `crawl c=${concurrency}: ${seconds(time)} (floor ${seconds(floor)}, ${rounds} rounds) ratio ${ratio(r)}${tail}  [runs ${runsText}]`,
    );
  }
} finally {
  await upstream.close();
}
