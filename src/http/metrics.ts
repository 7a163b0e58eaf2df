import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Store } from '../db/store.js';
import { keepLast } from './last-known.js';
import { registerMediaMetrics } from './media-metrics.js';
import { createRequestMetrics, type RequestMetrics } from './request-metrics.js';
import type { SnapshotHolder } from './snapshot-holder.js';

export interface Metrics extends RequestMetrics {
  registry: Registry;
}

type Figures = Pick<Store, 'runCounts' | 'latestSucceededRun' | 'mediaFigures'>;

/** The store's figures, each answering its last known value while the store cannot answer. */
function lastKnown(store: Store): Figures {
  return {
    runCounts: keepLast(() => store.runCounts()),
    latestSucceededRun: keepLast(() => store.latestSucceededRun()),
    mediaFigures: keepLast(() => store.mediaFigures()),
  };
}

/**
 * One registry per server (tests build several). Run figures are read from the database at scrape
 * time, so they are right even when syncs run in another process.
 */
export function createMetrics(database: Store, snapshots: SnapshotHolder): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'coworker_mirror_' });
  const store = lastKnown(database);
  new Gauge({
    name: 'coworker_mirror_database_up',
    help: 'Whether the database answered at this scrape (0: figures read from it are the last known)',
    registers: [registry],
    async collect() {
      this.set(
        await database.databaseProblem().then(
          () => 1,
          () => 0,
        ),
      );
    },
  });
  new Gauge({
    name: 'coworker_mirror_runs',
    help: 'Sync runs recorded, by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      for (const [status, n] of await store.runCounts()) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'coworker_mirror_last_success_timestamp_seconds',
    help: 'Finish time of the latest successful sync (0: none yet)',
    registers: [registry],
    async collect() {
      const at = (await store.latestSucceededRun())?.finishedAt;
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
