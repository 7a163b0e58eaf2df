import type { Config, WebhookEventType } from '../config.js';

/** What the outbox writer needs inside a run's transaction: plain data, so it crosses processes. */
export interface OutboxSettings {
  urls: readonly string[];
  events: readonly WebhookEventType[];
  failureThreshold: number;
}

/** What a delivery worker needs; the secret lives only here, in memory. */
export interface DeliverySettings {
  urls: readonly string[];
  secret: string | null;
  retryScheduleMs: readonly number[];
  timeoutMs: number;
}

/** Undefined when no endpoint is configured: the outbox then writes nothing. */
export function outboxSettingsFrom(config: Config): OutboxSettings | undefined {
  if (config.webhookUrls.length === 0) return undefined;
  return {
    urls: config.webhookUrls,
    events: config.webhookEvents,
    failureThreshold: config.webhookFailureThreshold,
  };
}

export function deliverySettingsFrom(config: Config): DeliverySettings {
  return {
    urls: config.webhookUrls,
    secret: config.webhookSecret,
    retryScheduleMs: config.webhookRetrySchedule,
    timeoutMs: config.webhookTimeoutMs,
  };
}
