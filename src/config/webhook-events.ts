/**
 * Event types a webhook can carry; WEBHOOK_EVENTS filters them. Apart from the values' schemas, so
 * the settings table (its default) loads no zod.
 */
export const webhookEventTypes = ['coworkers.changed', 'sync.failed', 'sync.recovered'] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];
