import type { MirrorDatabase } from '../../src/db/open.js';
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { writeSucceededRunOutbox } from '../../src/webhooks/outbox.js';
import type { DeliverySettings } from '../../src/webhooks/settings.js';
import { silentLogger } from '../../src/logger.js';
import { onTestFinished } from 'vitest';

let counter = 0;

/**
 * Records a succeeded run that added one coworker, with its outbox, in one transaction, as
 * commitRun does, without crawling anything: the fast way to make many notifications.
 */
export function recordRunWithChange(store: MirrorDatabase, urls: readonly string[]): number {
  return store.sqlite
    .transaction(() => {
      const now = new Date().toISOString();
      const runId = Number(
        store.sqlite
          .prepare(
            `insert into runs (status, started_at, finished_at, upstream, added) values ('succeeded', ?, ?, ?, 1)`,
          )
          .run(now, now, 'http://upstream.invalid').lastInsertRowid,
      );
      const uuid = (++counter).toString(36).padStart(32, '0');
      store.sqlite
        .prepare(
          `insert into changes (run_id, at, uuid, slot, kind, new_value) values (?, ?, ?, 0, 'added', ?)`,
        )
        .run(runId, now, uuid, JSON.stringify({ uuid, name: `Person ${counter}` }));
      writeSucceededRunOutbox(store, runId, {
        urls,
        events: ['coworkers.changed', 'sync.failed', 'sync.recovered'],
        failureThreshold: 3,
      });
      return runId;
    })
    .immediate();
}

/** Fast retries for tests: the schedule in milliseconds, no jitter. */
export function deliverySettings(
  urls: readonly string[],
  overrides: Partial<DeliverySettings> = {},
): DeliverySettings {
  return { urls, secret: null, retryScheduleMs: [10, 10, 10], timeoutMs: 2_000, ...overrides };
}

/** A worker over `store`, stopped when the test ends. */
export function deliveryWorker(store: MirrorDatabase, settings: DeliverySettings): DeliveryWorker {
  const worker = new DeliveryWorker({ store, logger: silentLogger(), settings, random: () => 0.5 });
  onTestFinished(() => worker.stop());
  return worker;
}

export interface AttemptRow {
  delivery_id: number;
  http_status: number | null;
  ok: number;
  error_code: string | null;
}

export function attemptRows(store: MirrorDatabase): AttemptRow[] {
  return store.sqlite
    .prepare('select delivery_id, http_status, ok, error_code from webhook_attempts order by id')
    .all() as AttemptRow[];
}

export function webhookIds(store: MirrorDatabase): string[] {
  return store.sqlite
    .prepare('select webhook_id from webhook_messages order by id')
    .pluck()
    .all() as string[];
}
