import type { MirrorDatabase } from '../../src/db/open.js';
import type { Store } from '../../src/db/store.js';
import { OutboxWorker } from '../../src/outbox/worker.js';
import { webhookChannel } from '../../src/webhooks/channel.js';
import type { DeliverySettings } from '../../src/webhooks/settings.js';
import { silentLogger } from '../../src/logger.js';
import { onTestFinished } from 'vitest';
import { testConfig } from './config.js';

export { recordRunWithChange } from './recorded-run.js';

/** Fast retries for tests: the schedule in milliseconds, no jitter. */
export function deliverySettings(
  urls: readonly string[],
  overrides: Partial<DeliverySettings> = {},
): DeliverySettings {
  const { webhooks } = testConfig({ WEBHOOK_RETRY_SCHEDULE: '10,10,10', WEBHOOK_TIMEOUT: '2s' });
  return { ...webhooks, urls, ...overrides };
}

/** A worker over `store`, stopped when the test ends. */
export function deliveryWorker(store: Store, settings: DeliverySettings): OutboxWorker {
  const worker = new OutboxWorker({
    channels: [webhookChannel({ store, settings })],
    logger: silentLogger(),
    store,
    random: () => 0.5,
  });
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
