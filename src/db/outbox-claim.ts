import type { Claim, ClaimResult } from './store.js';
import { dueHeads, type QueueHead } from './commit-plans.js';
import { selected } from './port-shapes.js';
import type { TransactionPort } from './sql-port.js';

// The outbox's claim, written once for both stores and both kinds of delivery: the rows read are
// locked where the store locks rows (PostgreSQL: two instances claiming at once skip each other's
// rows, so none is leased twice), and on SQLite the write transaction is the lock (one writer).

/**
 * Reads `sql` (rows of `webhook_deliveries d`) in one write transaction, locking the rows where
 * the store can, and leases the deliveries `choose` keeps to `lease.token` until `lease.until`.
 */
export async function claimRows<R extends unknown[], T>(
  port: TransactionPort,
  sql: string,
  params: readonly unknown[],
  lease: { until: number; token: string },
  choose: (rows: R[]) => { leased: number[]; result: T },
): Promise<T> {
  const locking = port.dialect === 'postgres' ? `${sql} for update of d skip locked` : sql;
  return port.write(async (tx) => {
    const { leased, result } = choose(await tx.rows<R>(locking, params));
    if (leased.length === 0) return result;
    const list = tx.list('bigint', leased);
    await tx.run(`update webhook_deliveries set lease_until = ?, lease_token = ? where id in ${list.sql}`, [
      new Date(lease.until).toISOString(),
      lease.token,
      list.param,
    ]);
    return result;
  });
}

const HEAD = selected<QueueHead>({
  deliveryId: 'd.id',
  endpointId: 'e.id',
  url: 'e.url',
  nextAttemptAt: 'd.next_attempt_at',
  leaseUntil: 'd.lease_until',
  tries: 'd.tries',
  webhookId: 'm.webhook_id',
  body: 'm.body',
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
    `select ${HEAD.sql}
       from webhook_endpoints e
       join webhook_deliveries d on d.id = (
              select id from webhook_deliveries
               where endpoint_id = e.id and status = 'pending' order by id limit 1)
       join webhook_messages m on m.id = d.message_id
      where e.disabled_at is null and e.url in ${urls.sql}
      order by e.id`,
    [urls.param],
    { until: options.now + options.leaseMs, token: options.token },
    (rows) => {
      const { due, nextWakeAt } = dueHeads(rows.map(HEAD.of), options);
      const claims = due.map(({ nextAttemptAt, leaseUntil, ...claim }): Claim => claim);
      return { leased: due.map((h) => h.deliveryId), result: { claims, nextWakeAt } };
    },
  );
}
