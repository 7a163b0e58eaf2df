import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { MirrorDatabase } from '../db/open.js';
import { latestSucceededRun } from '../db/queries.js';
import { runCountsReader } from '../db/sqlite/runs.js';
import { registerMediaMetrics } from './media-metrics.js';
import { createRequestMetrics, type RequestMetrics } from './request-metrics.js';
import type { SnapshotHolder } from './snapshot-holder.js';

export interface Metrics extends RequestMetrics {
  registry: Registry;
}

/**
 * One registry per server (tests build several). Run figures are read from the database at scrape
 * time, so they are right even when syncs run in another process.
 */
export function createMetrics(store: MirrorDatabase, snapshots: SnapshotHolder): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'coworker_mirror_' });
  const runCounts = runCountsReader(store);
  new Gauge({
    name: 'coworker_mirror_runs',
    help: 'Sync runs recorded, by status',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      for (const [status, n] of runCounts()) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'coworker_mirror_last_success_timestamp_seconds',
    help: 'Finish time of the latest successful sync (0: none yet)',
    registers: [registry],
    collect() {
      const at = latestSucceededRun(store)?.finishedAt;
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
