// The store's outbox operations, written once over an OutboxPort: what each store wires up.
export { claimDue } from './outbox-claim.js';
export { enableEndpoint, recordAttempt, redeliver, releaseLease } from './outbox-attempts.js';
export {
  countDeliveries,
  deliveryFigures,
  getDelivery,
  listDeliveries,
  pendingDeliveries,
} from './outbox-reads.js';
export { disabledNotifyTargets, enableNotifyTargets } from './notify-outbox.js';
