import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Store } from '../db/store.js';
import { withinDeadline } from '../time/deadline.js';
import { keepLast, type ScrapeRead } from './last-known.js';
import { registerMediaMetrics } from './media-metrics.js';
import { createRequestMetrics, type RequestMetrics } from './request-metrics.js';
import type { SnapshotHolder } from './snapshot-holder.js';

export interface Metrics extends RequestMetrics {
  registry: Registry;
}

interface Figures {
  runCounts: ScrapeRead<Awaited<ReturnType<Store['runCounts']>>>;
  latestSucceededRun: ScrapeRead<Awaited<ReturnType<Store['latestSucceededRun']>>>;
  mediaFigures: ScrapeRead<Awaited<ReturnType<Store['mediaFigures']>>>;
}

function lastKnown(store: Store, deadlineMs: number): Figures {
  return {
    runCounts: keepLast(() => store.runCounts(), deadlineMs),
    latestSucceededRun: keepLast(() => store.latestSucceededRun(), deadlineMs),
    mediaFigures: keepLast(() => store.mediaFigures(), deadlineMs),
  };
}

/** 1 when the database answered the health check within the deadline, else 0. */
async function databaseUp(store: Store, deadlineMs: number): Promise<number> {
  try {
    const checked = await withinDeadline(store.databaseProblem(), deadlineMs);
    return checked.settled && checked.value === null ? 1 : 0;
  } catch {
    return 0;
  }
}

/**
 * One registry per server (tests build several). Run figures are read from the database at scrape
 * time, so they are right even when syncs run in another process. Every read has DATABASE_PROBE_TIMEOUT
 * (`deadlineMs`): a scrape answers 200 while the database does not, with the last known figures (a
 * figure never read is left out) and `coworker_mirror_database_up 0`.
 */
export function createMetrics(database: Store, snapshots: SnapshotHolder, deadlineMs: number): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'coworker_mirror_' });
  const store = lastKnown(database, deadlineMs);
  new Gauge({
    name: 'coworker_mirror_database_up',
    help: 'Whether the database answered at this scrape (0: figures read from it are the last known)',
    registers: [registry],
    async collect() {
      this.set(await databaseUp(database, deadlineMs));
    },
  });
  new Gauge({
    name: 'coworker_mirror_runs',
    help: 'Sync runs recorded, by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      for (const [status, n] of (await store.runCounts())?.value ?? []) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'coworker_mirror_last_success_timestamp_seconds',
    help: 'Finish time of the latest successful sync (0: none yet)',
    registers: [registry],
    async collect() {
      const run = await store.latestSucceededRun();
      // Never read from the database: the snapshot served is the newest success this server knows.
      const at = run === null ? snapshots.info?.fetchedAt.toISOString() : run.value?.finishedAt;
      this.set(at ? Date.parse(at) / 1000 : 0);
    },
  });
  new Gauge({
    name: 'coworker_mirror_entries_served',
    help: 'Entries in the snapshot currently served',
    registers: [registry],
    collect() {
      this.set(snapshots.info?.entries ?? 0);
    },
  });
  const requestMetrics = createRequestMetrics(registry);
  registerMediaMetrics(registry, store);
  return { registry, ...requestMetrics };
}
