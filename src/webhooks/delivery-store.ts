import type { Store } from '../db/store.js';

export type { AttemptOutcome, Claim, ClaimResult } from '../db/store.js';

/**
 * Sends delivery `id` again (same message, same webhook-id) as soon as its endpoint's queue allows,
 * with a fresh retry schedule; re-enables its endpoint. False when no such delivery exists.
 */
export function redeliver(store: Store, id: number): Promise<boolean> {
  return store.redeliver(id);
}

/** Re-enables an endpoint a 410 disabled; its pending deliveries resume in order. */
export function enableEndpoint(store: Store, endpointId: number): Promise<boolean> {
  return store.enableEndpoint(endpointId);
}
