import { Histogram, type Registry } from 'prom-client';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { OutboxChannel } from '../outbox/channel.js';
import { webhookChannel } from './channel.js';

/**
 * The webhook channel of `start`'s outbox worker, with its attempts' latency in the metrics; null
 * when no endpoint is configured.
 */
export function startWebhookChannel(deps: {
  config: Pick<Config, 'webhooks'>;
  store: Store;
  logger: Logger;
  registry?: Registry;
}): OutboxChannel | null {
  const settings = deps.config.webhooks;
  if (settings.urls.length === 0) return null;
  const latency = deps.registry ? attemptLatency(deps.registry) : null;
  deps.logger.info(
    { endpoints: settings.urls.length, signed: settings.secret !== null },
    'webhook delivery started',
  );
  return webhookChannel({
    store: deps.store,
    settings,
    onAttempt: (result) =>
      latency?.observe({ outcome: result.ok ? 'ok' : 'failed' }, result.durationMs / 1000),
  });
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
