import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MirrorDatabase } from '../db/open.js';
import { latestSucceededRun } from '../db/queries.js';
import { runStatuses } from '../db/schema.js';
import { registerMediaMetrics } from './media-metrics.js';
import type { SnapshotHolder } from './snapshot-holder.js';

export interface Metrics {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  latency: Histogram<'route'>;
}

/**
 * One registry per server (tests build several). Run figures are read from the database at scrape
 * time, so they are right even when syncs run in another process.
 */
export function createMetrics(store: MirrorDatabase, snapshots: SnapshotHolder): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'coworker_mirror_' });
  const countByStatus = store.sqlite.prepare('select status, count(*) as n from runs group by status');
  new Gauge({
    name: 'coworker_mirror_runs',
    help: 'Sync runs recorded, by status',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      const counts = new Map(
        (countByStatus.all() as { status: string; n: number }[]).map((r) => [r.status, r.n]),
      );
      for (const status of runStatuses) this.set({ status }, counts.get(status) ?? 0);
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
  const requests = new Counter({
    name: 'coworker_mirror_http_requests_total',
    help: 'HTTP requests answered, by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'coworker_mirror_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route',
    labelNames: ['route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  registerMediaMetrics(registry, store);
  return { registry, requests, latency };
}
