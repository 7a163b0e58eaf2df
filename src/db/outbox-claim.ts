import { dueHeads, type QueueHead } from './commit-plans.js';
import type { SqlPort, TransactionPort } from './sql-port.js';

// The outbox's claim, written once for both stores and both kinds of delivery: the rows read are
// locked where the store locks rows (PostgreSQL: two instances claiming at once skip each other's
// rows, so none is leased twice), and on SQLite the write transaction is the lock (one writer).

/** A delivery this process has leased for one attempt. */
export interface Claim {
  deliveryId: number;
  endpointId: number;
  url: string;
  webhookId: string;
  body: string;
  /** Failed attempts so far in this series (0 before the first). */
  tries: number;
}

export interface ClaimResult {
  claims: Claim[];
  /** When the next delivery becomes due (a retry, or a lease another process holds ends); null: none. */
  nextWakeAt: number | null;
}

/** The claim of a queue head this process leased. */
export const claimOf = (head: QueueHead): Claim => ({
  deliveryId: head.deliveryId,
  endpointId: head.endpointId,
  url: head.url,
  webhookId: head.webhookId,
  body: head.body,
  tries: head.tries,
});

/** Who leases, and until when. */
interface Lease {
  until: string;
  token: string;
}

/**
 * Reads `select` (rows of `webhook_deliveries d`, the delivery's id first) in one write
 * transaction, locking the rows where the store can, and leases the deliveries `choose` keeps.
 */
async function claimRows<R extends [number, ...unknown[]], T>(
  port: TransactionPort,
  select: { sql: string; params: readonly unknown[] },
  choose: (rows: R[]) => { leased: number[]; result: T },
  lease: () => Lease,
): Promise<T> {
  const locking = port.dialect === 'postgres' ? `${select.sql} for update of d skip locked` : select.sql;
  return port.write(async (tx) => {
    const { leased, result } = choose(await tx.rows<R>(locking, select.params));
    if (leased.length > 0) await leaseAll(tx, leased, lease());
    return result;
  });
}

async function leaseAll(tx: SqlPort, ids: readonly number[], lease: Lease): Promise<void> {
  const list = tx.list('bigint', ids);
  await tx.run(`update webhook_deliveries set lease_until = ?, lease_token = ? where id in ${list.sql}`, [
    lease.until,
    lease.token,
    list.param,
  ]);
}

type HeadTuple = [
  deliveryId: number,
  endpointId: number,
  url: string,
  nextAttemptAt: string,
  leaseUntil: string | null,
  tries: number,
  webhookId: string,
  body: string,
];

const headOf = ([
  deliveryId,
  endpointId,
  url,
  nextAttemptAt,
  leaseUntil,
  tries,
  webhookId,
  body,
]: HeadTuple): QueueHead => ({
  deliveryId,
  endpointId,
  url,
  nextAttemptAt,
  leaseUntil,
  tries,
  webhookId,
  body,
});

/**
 * Leases the head of each configured, enabled endpoint's queue when it is due and nobody else
 * holds it. Only the head: a delivery never overtakes an older one to the same endpoint.
 */
export async function claimDue(
  port: TransactionPort,
  options: {
    urls: readonly string[];
    busyEndpoints: ReadonlySet<number>;
    leaseMs: number;
    token: string;
    now: number;
  },
): Promise<ClaimResult> {
  if (options.urls.length === 0) return { claims: [], nextWakeAt: null };
  const urls = port.list('text', options.urls);
  return claimRows(
    port,
    {
      sql: `select d.id, e.id, e.url, d.next_attempt_at, d.lease_until, d.tries, m.webhook_id, m.body
              from webhook_endpoints e
              join webhook_deliveries d on d.id = (
                     select id from webhook_deliveries
                      where endpoint_id = e.id and status = 'pending' order by id limit 1)
              join webhook_messages m on m.id = d.message_id
             where e.disabled_at is null and e.url in ${urls.sql}
             order by e.id`,
      params: [urls.param],
    },
    (rows: HeadTuple[]) => {
      const { due, nextWakeAt } = dueHeads(rows.map(headOf), options);
      return { leased: due.map((h) => h.deliveryId), result: { claims: due.map(claimOf), nextWakeAt } };
    },
    () => ({ until: new Date(options.now + options.leaseMs).toISOString(), token: options.token }),
  );
}

/** A notification row this process has leased: its target's endpoint URL and its message text. */
export interface ClaimedNotification {
  id: number;
  url: string;
  body: string;
  tries: number;
}

/** Leases up to `limit` due notification rows of enabled targets, oldest first. */
export function claimDueNotifications(
  port: TransactionPort,
  options: { now: Date; limit: number; leaseMs: number; token: string },
): Promise<ClaimedNotification[]> {
  const at = options.now.toISOString();
  return claimRows(
    port,
    {
      sql: `select d.id, e.url, m.body, d.tries
              from webhook_deliveries d
              join webhook_endpoints e on e.id = d.endpoint_id
              join webhook_messages m on m.id = d.message_id
             where d.status = 'pending' and e.disabled_at is null and e.channel = 'notify'
               and d.next_attempt_at <= ? and (d.lease_until is null or d.lease_until <= ?)
             order by d.id limit ?`,
      params: [at, at, options.limit],
    },
    (rows: [number, string, string, number][]) => ({
      leased: rows.map(([id]) => id),
      result: rows.map(([id, url, body, tries]) => ({ id, url, body, tries })),
    }),
    () => ({ until: new Date(options.now.getTime() + options.leaseMs).toISOString(), token: options.token }),
  );
}
