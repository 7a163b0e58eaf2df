import { randomBytes } from 'node:crypto';
import { NOTIFY_ENDPOINT_PREFIX } from './endpoint-keys.js';
import {
  completeNotification,
  disableEndpointOf,
  releaseLeases,
  type NotificationCompletion,
} from './outbox-attempts.js';
import { claimDueNotifications } from './outbox-claim.js';
import { enqueueDigest } from './outbox-enqueue.js';
import type { OutboxPort } from './outbox-port.js';
import type { DigestPlan } from './run-commit.js';
import type { DisabledNotifyTarget } from './store.js';

/** How long a claimed row stays out of other workers' reach: longer than any one send. */
const LEASE_MS = 5 * 60_000;

const IS_NOTIFY = `channel = 'notify'`;

/** A notification row leased for one send: its target by id, never its URL; its message as stored. */
export interface NotificationRow {
  id: number;
  targetId: string;
  /** The message's JSON, as the run's commit wrote it. */
  body: string;
  /** Attempts made before this claim. */
  attempts: number;
}

/** The notification rows of a store's outbox, as the notification worker's outbox reads them. */
export interface NotificationRows {
  enqueue(): Promise<void>;
  claim(now: Date, limit: number): Promise<NotificationRow[]>;
  complete(id: number, result: NotificationCompletion): Promise<void>;
  disableTarget(targetId: string, reason: string): Promise<void>;
  release(): Promise<void>;
  countPending(): Promise<number>;
  enqueueDigest?(plan: DigestPlan): Promise<number>;
}

/**
 * The notification rows of the outbox (endpoints keyed `notify:<targetId>`), written once for both
 * stores: the rows are written by the run's own transaction, so `enqueue` has nothing to do here.
 */
export class PortNotificationOutbox implements NotificationRows {
  readonly #port: OutboxPort;
  readonly #token = randomBytes(8).toString('hex');

  constructor(port: OutboxPort) {
    this.#port = port;
  }

  enqueue(): Promise<void> {
    return Promise.reject(new Error('notification rows are written by the run commit'));
  }

  /** Leases the due rows of enabled targets, oldest first. */
  async claim(now: Date, limit: number): Promise<NotificationRow[]> {
    const rows = await claimDueNotifications(this.#port, {
      now,
      limit,
      leaseMs: LEASE_MS,
      token: this.#token,
    });
    return rows.map((row) => ({
      id: row.id,
      targetId: row.url.slice(NOTIFY_ENDPOINT_PREFIX.length),
      body: row.body,
      attempts: row.tries,
    }));
  }

  complete(id: number, result: NotificationCompletion): Promise<void> {
    return completeNotification(this.#port, id, result);
  }

  disableTarget(targetId: string, reason: string): Promise<void> {
    return disableEndpointOf(this.#port, `${NOTIFY_ENDPOINT_PREFIX}${targetId}`, reason);
  }

  async countPending(): Promise<number> {
    const [row] = await this.#port.rows<[number]>(
      `select count(*) from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where d.status = 'pending' and e.disabled_at is null and e.channel = 'notify'`,
    );
    return row?.[0] ?? 0;
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
  return rows.map(([url, disabledAt, reason]) => ({
    targetId: url.slice(NOTIFY_ENDPOINT_PREFIX.length),
    disabledAt,
    reason,
  }));
}

/** Re-enables one disabled notification target, or all of them (null); answers the ids enabled. */
export async function enableNotifyTargets(port: OutboxPort, targetId: string | null): Promise<string[]> {
  const url = targetId === null ? null : `${NOTIFY_ENDPOINT_PREFIX}${targetId}`;
  const rows = await port.rows<[string]>(
    `update webhook_endpoints set disabled_at = null, disabled_reason = null
      where disabled_at is not null and ${IS_NOTIFY} and (cast(? as text) is null or url = cast(? as text))
      returning url`,
    [url, url],
  );
  if (rows.length > 0) await port.announce();
  return rows.map(([enabled]) => enabled.slice(NOTIFY_ENDPOINT_PREFIX.length)).sort();
}
