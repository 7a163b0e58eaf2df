/**
 * The events a person can be told of; NOTIFY_EVENTS filters them. Apart from the targets' schemas,
 * so the settings table (its default) loads no zod.
 */
export const notifyEventTypes = ['changes', 'failures', 'recoveries'] as const;
export type NotifyEventType = (typeof notifyEventTypes)[number];
