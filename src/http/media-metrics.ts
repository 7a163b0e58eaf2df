import { Gauge, type Registry } from 'prom-client';
import type { Store } from '../db/store.js';
import type { ScrapeRead } from './last-known.js';

/**
 * Media figures read from the database at scrape time (syncs may run in another process): totals
 * over every run, the latest media run's own counts, and what the store holds.
 */
export function registerMediaMetrics(
  registry: Registry,
  store: { mediaFigures: ScrapeRead<Awaited<ReturnType<Store['mediaFigures']>>> },
): void {
  const outcomes = ['fetched', 'revalidated', 'failed'] as const;
  new Gauge({
    name: 'coworker_mirror_media_items',
    help: 'Media URLs by outcome, summed over all runs (scope=total) or of the latest media run (scope=last_run)',
    labelNames: ['outcome', 'scope'],
    registers: [registry],
    async collect() {
      const figures = await store.mediaFigures();
      if (figures === null) return;
      const { total: sum, lastRun: last } = figures.value;
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
    async collect() {
      const figures = await store.mediaFigures();
      if (figures === null) return;
      const { total, lastRun } = figures.value;
      this.set({ scope: 'total' }, total.bytes);
      this.set({ scope: 'last_run' }, lastRun.bytes);
    },
  });
  new Gauge({
    name: 'coworker_mirror_media_stored',
    help: 'Media files kept by the mirror (unit=files) and their size (unit=bytes)',
    labelNames: ['unit'],
    registers: [registry],
    async collect() {
      const row = (await store.mediaFigures())?.value.stored;
      if (row === undefined) return;
      this.set({ unit: 'files' }, row.files);
      this.set({ unit: 'bytes' }, row.bytes);
    },
  });
}
