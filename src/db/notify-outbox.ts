import type { AttemptOutcome, DisabledNotifyTarget } from './store.js';
import { randomBytes } from 'node:crypto';
import { NOTIFY_ENDPOINT_PREFIX } from './endpoint-keys.js';
import { disableEndpoint, moveOn, releaseLeases } from './outbox-attempts.js';
import { claimRows } from './outbox-claim.js';
import { enqueueDigest } from './outbox-enqueue.js';
import type { OutboxPort } from './outbox-port.js';
import type { DigestPlan } from './run-commit.js';

/** How long a claimed row stays out of other workers' reach: longer than any one send. */
const LEASE_MS = 5 * 60_000;

const IS_NOTIFY = `channel = 'notify'`;

const targetIdOf = (url: string): string => url.slice(NOTIFY_ENDPOINT_PREFIX.length);

/** How a notification's send ended, as its row records it. */
type NotificationCompletion =
  | { status: 'delivered' }
  | { status: 'pending'; nextAttemptAt: Date }
  | { status: 'failed' }
  | { status: 'target_disabled' };

/** The notification rows of a store's outbox, as the notification worker's outbox reads them. */
export type NotificationRows = PortNotificationOutbox;

/**
 * The notification rows of the outbox (endpoints keyed `notify:<targetId>`), written once for both
 * stores; the run's own transaction writes them (src/db/run-outbox.ts).
 */
export class PortNotificationOutbox {
  readonly #port: OutboxPort;
  readonly #token = randomBytes(8).toString('hex');

  constructor(port: OutboxPort) {
    this.#port = port;
  }

  /**
   * Leases up to `limit` due rows of enabled targets, oldest first: each with its target by id,
   * never its URL, its message's JSON as the run's commit wrote it, and the attempts made before.
   */
  claim(
    now: Date,
    limit: number,
  ): Promise<{ id: number; targetId: string; body: string; attempts: number }[]> {
    const at = now.toISOString();
    return claimRows(
      this.#port,
      `select d.id, e.url, m.body, d.tries
         from webhook_deliveries d
         join webhook_endpoints e on e.id = d.endpoint_id
         join webhook_messages m on m.id = d.message_id
        where d.status = 'pending' and e.disabled_at is null and e.${IS_NOTIFY}
          and d.next_attempt_at <= ? and (d.lease_until is null or d.lease_until <= ?)
        order by d.id limit ?`,
      [at, at, limit],
      { until: now.getTime() + LEASE_MS, token: this.#token },
      (rows: [number, string, string, number][]) => ({
        leased: rows.map(([id]) => id),
        result: rows.map(([id, url, body, attempts]) => ({ id, targetId: targetIdOf(url), body, attempts })),
      }),
    );
  }

  /** Moves a row on after an attempt and ends its lease. */
  complete(id: number, result: NotificationCompletion): Promise<void> {
    const outcome: AttemptOutcome =
      result.status === 'delivered'
        ? { kind: 'succeeded' }
        : result.status === 'pending'
          ? { kind: 'retry', nextAttemptAt: result.nextAttemptAt.toISOString() }
          : { kind: 'failed' };
    // One statement: its own transaction.
    return moveOn(this.#port, id, outcome, new Date().toISOString());
  }

  async disableTarget(targetId: string, reason: string): Promise<void> {
    const url = `${NOTIFY_ENDPOINT_PREFIX}${targetId}`;
    await disableEndpoint(this.#port, 'url = ?', url, reason, new Date().toISOString());
  }

  async countPending(): Promise<number> {
    const [count = 0] = await this.#port.values<number>(
      `select count(*) from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where d.status = 'pending' and e.disabled_at is null and e.${IS_NOTIFY}`,
    );
    return count;
  }

  release(): Promise<void> {
    return releaseLeases(this.#port, this.#token);
  }

  /** The digest of `plan`'s period for each target that has none yet (enqueueDigest); the deliveries written. */
  enqueueDigest(plan: DigestPlan): Promise<number> {
    return enqueueDigest(this.#port, plan);
  }
}

/** The notification targets a permanent refusal disabled, oldest first. */
export async function disabledNotifyTargets(port: OutboxPort): Promise<DisabledNotifyTarget[]> {
  const rows = await port.rows<[string, string, string | null]>(
    `select url, disabled_at, disabled_reason from webhook_endpoints
      where disabled_at is not null and ${IS_NOTIFY} order by disabled_at, id`,
  );
  return rows.map(([url, disabledAt, reason]) => ({ targetId: targetIdOf(url), disabledAt, reason }));
}

/** Re-enables one disabled notification target, or all of them (null); answers the ids enabled. */
export async function enableNotifyTargets(port: OutboxPort, targetId: string | null): Promise<string[]> {
  const url = targetId === null ? null : `${NOTIFY_ENDPOINT_PREFIX}${targetId}`;
  const urls = await port.values<string>(
    `update webhook_endpoints set disabled_at = null, disabled_reason = null
      where disabled_at is not null and ${IS_NOTIFY} and (cast(? as text) is null or url = cast(? as text))
      returning url`,
    [url, url],
  );
  if (urls.length > 0) await port.announce();
  return urls.map(targetIdOf).sort();
}
