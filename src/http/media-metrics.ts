import { Gauge, type Registry } from 'prom-client';
import type { MirrorDatabase } from '../db/open.js';
import { mediaFiguresReader } from '../db/sqlite/media.js';

/**
 * Media figures read from the database at scrape time (syncs may run in another process): totals
 * over every run, the latest media run's own counts, and what the store holds.
 */
export function registerMediaMetrics(registry: Registry, store: MirrorDatabase): void {
  const figures = mediaFiguresReader(store);
  const outcomes = ['fetched', 'revalidated', 'failed'] as const;
  new Gauge({
    name: 'coworker_mirror_media_items',
    help: 'Media URLs by outcome, summed over all runs (scope=total) or of the latest media run (scope=last_run)',
    labelNames: ['outcome', 'scope'],
    registers: [registry],
    collect() {
      const sum = figures.total();
      const last = figures.lastRun();
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
      this.set({ scope: 'total' }, figures.total().bytes);
      this.set({ scope: 'last_run' }, figures.lastRun().bytes);
    },
  });
  new Gauge({
    name: 'coworker_mirror_media_stored',
    help: 'Media files kept by the mirror (unit=files) and their size (unit=bytes)',
    labelNames: ['unit'],
    registers: [registry],
    collect() {
      const row = figures.stored();
      this.set({ unit: 'files' }, row.files);
      this.set({ unit: 'bytes' }, row.bytes);
    },
  });
}
