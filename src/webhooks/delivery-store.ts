/** The outbox's named operations, as the worker, the API and the CLI call them. */
export {
  claimDue,
  enableEndpoint,
  recordAttempt,
  redeliver,
  releaseLease,
  type AttemptOutcome,
  type Claim,
  type ClaimResult,
} from '../db/sqlite/deliveries.js';
