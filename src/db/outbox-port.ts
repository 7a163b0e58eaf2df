import type { TransactionPort } from './sql-port.js';

/** The port the outbox's operations are written over (src/db/outbox-claim.ts and its neighbours). */
export interface OutboxPort extends TransactionPort {
  /**
   * Tells the delivery workers of every instance that the outbox changed outside a run (a lease
   * handed back, a redelivery, a target enabled again), so they look again at once. Called after
   * the change committed; a store whose workers only share a process has nothing to announce.
   */
  announce(): Promise<void>;
}
