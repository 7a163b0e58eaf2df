import { Gauge, type Registry } from 'prom-client';
import type { MirrorDatabase } from '../db/open.js';

/**
 * Media figures read from the database at scrape time (syncs may run in another process): totals
 * over every run, the latest media run's own counts, and what the store holds.
 */
export function registerMediaMetrics(registry: Registry, store: MirrorDatabase): void {
  const totals = store.sqlite.prepare(
    `select coalesce(sum(fetched), 0) as fetched, coalesce(sum(revalidated), 0) as revalidated,
            coalesce(sum(failed), 0) as failed, coalesce(sum(bytes), 0) as bytes from media_runs`,
  );
  const latest = store.sqlite.prepare(
    'select fetched, revalidated, failed, bytes from media_runs order by run_id desc limit 1',
  );
  const held = store.sqlite.prepare(
    'select count(*) as files, coalesce(sum(size), 0) as bytes from media_blobs where dropped_at is null',
  );
  type Counts = { fetched: number; revalidated: number; failed: number; bytes: number };
  const outcomes = ['fetched', 'revalidated', 'failed'] as const;
  new Gauge({
    name: 'coworker_mirror_media_items',
    help: 'Media URLs by outcome, summed over all runs (scope=total) or of the latest media run (scope=last_run)',
    labelNames: ['outcome', 'scope'],
    registers: [registry],
    collect() {
      const sum = totals.get() as Counts;
      const last = (latest.get() as Counts | undefined) ?? {
        fetched: 0,
        revalidated: 0,
        failed: 0,
        bytes: 0,
      };
      for (const outcome of outcomes) {
        this.set({ outcome, scope: 'total' }, sum[outcome]);
        this.set({ outcome, scope: 'last_run' }, last[outcome]);
      }
    },
  });
  new Gauge({
    name: 'coworker_mirror_media_downloaded_bytes',
    help: 'Media bytes downloaded, summed over all runs (scope=total) or by the latest media run (scope=last_run)',
    labelNames: ['scope'],
    registers: [registry],
    collect() {
      this.set({ scope: 'total' }, (totals.get() as Counts).bytes);
      this.set({ scope: 'last_run' }, (latest.get() as Counts | undefined)?.bytes ?? 0);
    },
  });
  new Gauge({
    name: 'coworker_mirror_media_stored',
    help: 'Media files kept by the mirror (unit=files) and their size (unit=bytes)',
    labelNames: ['unit'],
    registers: [registry],
    collect() {
      const row = held.get() as { files: number; bytes: number };
      this.set({ unit: 'files' }, row.files);
      this.set({ unit: 'bytes' }, row.bytes);
    },
  });
}
