/**
 * The closed value sets of a few columns, apart from the drizzle tables so the CLI can offer them as
 * choices without loading the ORM (schema.ts builds its columns from these).
 */
export const changeKinds = ['added', 'changed', 'removed', 'returned', 'media_changed'] as const;
export type ChangeKind = (typeof changeKinds)[number];

export const runStatuses = ['running', 'succeeded', 'failed', 'aborted'] as const;

export const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/**
 * Whose sender an outbox endpoint's rows go to: a webhook receiver (signed Standard Webhooks) or a
 * notification target (a chat or mail message).
 */
export const outboxChannels = ['webhook', 'notify'] as const;
export type OutboxChannel = (typeof outboxChannels)[number];

/**
 * What started a run: a tick of SYNC_CRON (`schedule`), `start` catching up the last tick no instance
 * served (`catch-up`), `start` finding the mirror empty or stale (`startup`), the admin route
 * (`admin`), a bare `coworker-mirror sync` (`command`), the demo's data changing (`demo`).
 */
export const runTriggers = ['schedule', 'catch-up', 'startup', 'admin', 'command', 'demo'] as const;
export type RunTrigger = (typeof runTriggers)[number];

/**
 * The named values of `store_identity`: what tells one database apart from every other. `mirror_id`
 * names it (a media folder's owner file); `endpoint_id_key` is the secret its outbox's endpoint ids
 * are keyed under (src/db/endpoint-keys.ts), read only by the store as it opens.
 */
export const identityNames = ['mirror_id', 'endpoint_id_key'] as const;
export type IdentityName = (typeof identityNames)[number];
