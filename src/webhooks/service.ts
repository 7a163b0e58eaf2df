import { Histogram, type Registry } from 'prom-client';
import type { Config } from '../config/load-config.js';
import { openStore } from '../db/open-store.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import { DeliveryWorker } from './delivery-worker.js';

export interface WebhookService {
  worker: DeliveryWorker;
  stop(): Promise<void>;
}

/**
 * The delivery worker of `start`, on a store of its own: on SQLite, PRAGMA data_version then sees
 * every commit of the others, the in-process sync and a sync in another process alike. Null when no
 * endpoint is configured.
 */
export async function startWebhookDelivery(deps: {
  config: Pick<Config, 'webhooks' | 'database'>;
  logger: Logger;
  registry?: Registry;
}): Promise<WebhookService | null> {
  const settings = deps.config.webhooks;
  if (settings.urls.length === 0) return null;
  // In the server's process: its waits for SQLite's write lock hold every answer, as the server's own do.
  const store = await openStore(deps.config.database, { purpose: 'server' });
  const latency = deps.registry ? attemptLatency(deps.registry) : null;
  const worker = new DeliveryWorker({
    store,
    logger: deps.logger,
    settings,
    onAttempt: (result) =>
      latency?.observe({ outcome: result.ok ? 'ok' : 'failed' }, result.durationMs / 1000),
  });
  worker.start();
  deps.logger.info(
    { endpoints: settings.urls.length, signed: settings.secret !== null },
    'webhook delivery started',
  );
  return {
    worker,
    async stop() {
      await worker.stop();
      await store.close();
    },
  };
}

function attemptLatency(registry: Registry): Histogram<'outcome'> {
  return new Histogram({
    name: 'coworker_mirror_webhook_attempt_duration_seconds',
    help: 'Time of one webhook delivery attempt, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
}

/**
 * `sync`: after its commit, sends what is due within one WEBHOOK_TIMEOUT and leaves the rest
 * (retries, slow endpoints) pending for `start` or the next sync.
 */
export async function deliverAfterSync(
  store: Store,
  config: Pick<Config, 'webhooks'>,
  logger: Logger,
): Promise<void> {
  const settings = config.webhooks;
  if (settings.urls.length === 0) return;
  const worker = new DeliveryWorker({ store, logger, settings });
  try {
    const left = await worker.drain(settings.timeoutMs);
    if (left > 0) {
      logger.info({ pending: left }, 'webhook deliveries left pending for the next process');
    }
  } finally {
    await worker.stop();
  }
}
