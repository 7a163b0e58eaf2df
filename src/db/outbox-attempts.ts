import type { AttemptOutcome, AttemptRecord, Claim } from './store.js';
import type { OutboxPort } from './outbox-port.js';
import type { SqlPort } from './sql-port.js';
import { storableText } from './storable-text.js';

// What happens to an outbox row after a send, written once for both stores and both channels: its
// next state (delivered, retried at a time, failed, or held while its target is disabled), the
// lease it gives up, and the delivery log.

/** Why an endpoint a 410 Gone answered was disabled. */
const GONE_REASON = 'answered 410 Gone';

const ENABLE = 'update webhook_endpoints set disabled_at = null, disabled_reason = null';

const ATTEMPTED =
  'update webhook_deliveries set attempts = attempts + 1, lease_until = null, lease_token = null';

/**
 * Moves row `id` on after an attempt and ends its lease. A retry or a failure only moves a row
 * still pending: a redelivery in the meantime keeps the schedule it started.
 */
export async function moveOn(tx: SqlPort, id: number, outcome: AttemptOutcome, now: string): Promise<void> {
  switch (outcome.kind) {
    case 'succeeded':
      await tx.run(`${ATTEMPTED}, status = 'succeeded', finished_at = ? where id = ?`, [now, id]);
      return;
    case 'gone':
      // The row stays first in line: enabling its target again resumes where it stopped.
      await tx.run(`${ATTEMPTED} where id = ?`, [id]);
      return;
    case 'retry':
      await tx.run(
        `${ATTEMPTED}, tries = tries + 1, next_attempt_at = ? where id = ? and status = 'pending'`,
        [outcome.nextAttemptAt, id],
      );
      return;
    case 'failed':
      await tx.run(
        `${ATTEMPTED}, tries = tries + 1, status = 'failed', finished_at = ? where id = ? and status = 'pending'`,
        [now, id],
      );
  }
}

/** Disables the endpoint `where` names (one `?`), unless it already is. */
export function disableEndpoint(
  tx: SqlPort,
  where: string,
  key: unknown,
  reason: string,
  now: string,
): Promise<number> {
  return tx.run(
    `update webhook_endpoints set disabled_at = ?, disabled_reason = ? where ${where} and disabled_at is null`,
    [now, reason, key],
  );
}

/** Logs a webhook attempt and moves its delivery on, in one transaction. */
export function recordAttempt(
  port: OutboxPort,
  claim: Claim,
  result: AttemptRecord,
  outcome: AttemptOutcome,
): Promise<void> {
  return port.write(async (tx) => {
    await tx.run(
      `insert into webhook_attempts
         (delivery_id, at, duration_ms, http_status, ok, error_code, error, response_excerpt)
       values (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        claim.deliveryId,
        result.at,
        result.durationMs,
        result.httpStatus,
        // 1 and 0 are a boolean's input on PostgreSQL too.
        result.ok ? 1 : 0,
        result.errorCode,
        result.error === null ? null : storableText(result.error),
        result.excerpt === null ? null : storableText(result.excerpt),
      ],
    );
    const now = new Date().toISOString();
    await moveOn(tx, claim.deliveryId, outcome, now);
    if (outcome.kind === 'gone') await disableEndpoint(tx, 'id = ?', claim.endpointId, GONE_REASON, now);
  });
}

/** Hands back a lease this process holds, so the next worker can send the delivery at once. */
export function releaseLease(port: OutboxPort, claim: Claim, token: string): Promise<void> {
  return releasing(port, 'id = ? and lease_token = ?', [claim.deliveryId, token]);
}

/** Hands back every lease of `token` on rows still pending. */
export function releaseLeases(port: OutboxPort, token: string): Promise<void> {
  return releasing(port, "lease_token = ? and status = 'pending'", [token]);
}

async function releasing(port: OutboxPort, where: string, params: unknown[]): Promise<void> {
  const changed = await port.run(
    `update webhook_deliveries set lease_until = null, lease_token = null where ${where}`,
    params,
  );
  if (changed > 0) await port.announce();
}

/**
 * Sends delivery `id` again (same message, same webhook-id) as soon as its endpoint's queue allows,
 * with a fresh retry schedule; re-enables its endpoint. False when no such delivery exists.
 */
export async function redeliver(port: OutboxPort, id: number): Promise<boolean> {
  const done = await port.write(async (tx) => {
    const changed = await tx.run(
      `update webhook_deliveries set status = 'pending', tries = 0, next_attempt_at = ?, finished_at = null
        where id = ?`,
      [new Date().toISOString(), id],
    );
    if (changed === 0) return false;
    await tx.run(`${ENABLE} where id = (select endpoint_id from webhook_deliveries where id = ?)`, [id]);
    return true;
  });
  if (done) await port.announce();
  return done;
}

/** Re-enables an endpoint a 410 disabled; its pending deliveries resume in order. */
export async function enableEndpoint(port: OutboxPort, endpointId: number): Promise<boolean> {
  const changed = await port.run(`${ENABLE} where id = ?`, [endpointId]);
  if (changed > 0) await port.announce();
  return changed > 0;
}
