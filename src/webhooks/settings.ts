import type { WebhooksConfig } from '../config/load-config.js';

/** What the outbox writer needs inside a run's transaction: plain data, so it crosses processes. */
export type OutboxSettings = Pick<WebhooksConfig, 'urls' | 'events' | 'failureThreshold'>;

/** What a delivery worker needs; the secret lives only here, in memory. */
export type DeliverySettings = Pick<WebhooksConfig, 'urls' | 'secret' | 'retryScheduleMs' | 'timeoutMs'>;
