/**
 * One phase of bench/sync-scale.ts, run in its own process so `maxRSS` is this phase's alone.
 * Writes a PhaseReport as JSON to `--result`.
 *
 *   node --import tsx bench/lib/sync-phase.ts --phase crawl|sync --url URL --db FILE --result FILE
 */
import { statSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openDatabase } from '../../src/db/open.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { crawlDiscarding } from './client.js';
import { benchSyncSettings } from './settings.js';
import { timeStages } from './stage-timing.js';
import { timed } from './stats.js';

export interface PhaseReport {
  ms: number;
  entries: number;
  pages: number;
  /** The run's diff counts; absent for the crawl-only baseline. */
  counts?: Record<string, number>;
  maxRssBytes: number;
  /** RSS once the modules are loaded, before any work: the floor the phase starts from. */
  startRssBytes: number;
  /** Main file + WAL after `wal_checkpoint(TRUNCATE)`; absent for the baseline. */
  dbBytes?: number;
  /** Requests the upstream served during the phase; counted by the parent, which holds it. */
  upstreamRequests?: number;
  /**
   * Wall time inside each of the run stage's operations (append: staging during the crawl;
   * holdCurrent, chunk, entryTexts and record: the diff; commit), summed; absent for the baseline.
   * `crawled` is the time from the run's start to the crawl's end (the first `holdCurrent`).
   */
  stageMs?: Record<string, number>;
}

type Measured = Omit<PhaseReport, 'maxRssBytes' | 'startRssBytes' | 'upstreamRequests'>;

const startRssBytes = process.memoryUsage().rss;
const { values } = parseArgs({
  options: {
    phase: { type: 'string' },
    url: { type: 'string' },
    db: { type: 'string' },
    result: { type: 'string' },
  },
});
const { phase, url, db, result } = values;
if (!url || !result || (phase !== 'crawl' && phase !== 'sync') || (phase === 'sync' && !db)) {
  throw new Error('usage: sync-phase.ts --phase crawl|sync --url URL [--db FILE] --result FILE');
}

/** The crawl a sync makes (fetch, parse, validate, check), its pages dropped as they arrive. */
async function crawlOnly(upstreamUrl: string): Promise<Measured> {
  const { ms, value } = await timed(() => crawlDiscarding(benchSyncSettings(upstreamUrl)));
  return { ms, entries: value.count, pages: value.pages };
}

async function syncInto(upstreamUrl: string, file: string): Promise<Measured> {
  const store = openDatabase(file);
  const stageMs: Record<string, number> = {};
  try {
    const { ms, value } = await timed(() =>
      runSync(benchSyncSettings(upstreamUrl), { store: timeStages(store, stageMs), logger: silentLogger() }),
    );
    store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    const dbBytes = fileSize(file) + fileSize(`${file}-wal`);
    const counts = { ...value.counts };
    return { ms, entries: value.entries, pages: value.pages, counts, dbBytes, stageMs };
  } finally {
    store.close();
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

const measured = phase === 'crawl' ? await crawlOnly(url) : await syncInto(url, db ?? '');
// maxRSS is in kilobytes on Linux and macOS.
const report: PhaseReport = {
  ...measured,
  maxRssBytes: process.resourceUsage().maxRSS * 1024,
  startRssBytes,
};
writeFileSync(result, JSON.stringify(report));
