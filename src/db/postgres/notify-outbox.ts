import { randomBytes } from 'node:crypto';
import type { NotifyMessage } from '../../notify/message.js';
import type { NotificationOutbox, NotificationResult, OutboxNotification } from '../../notify/outbox.js';
import { NOTIFY_ENDPOINT_PREFIX } from '../run-commit.js';
import type { PgContext } from './context.js';
import { rows, run, transaction } from './sql.js';

// The notification rows of the webhook outbox on PostgreSQL: the twin of src/db/sqlite/notify-outbox.ts.
// A claim locks the rows it leases (FOR UPDATE SKIP LOCKED): two instances never send one twice.

/** How long a claimed row stays out of other workers' reach: longer than any one send. */
const LEASE_MS = 5 * 60_000;

interface DueRow {
  id: number;
  url: string;
  body: string;
  tries: number;
}

const BASE = 'update webhook_deliveries set attempts = attempts + 1, lease_until = null, lease_token = null';

export class PgNotificationOutbox implements NotificationOutbox {
  readonly #ctx: PgContext;
  readonly #token = randomBytes(8).toString('hex');

  constructor(ctx: PgContext) {
    this.#ctx = ctx;
  }

  enqueue(): Promise<void> {
    return Promise.reject(new Error('notification rows are written by the run commit'));
  }

  /** Leases the due rows of enabled targets, oldest first. */
  async claim(now: Date, limit: number): Promise<OutboxNotification[]> {
    const at = now.toISOString();
    const due = await transaction(this.#ctx.pool, async ({ client }) => {
      const found = await rows<DueRow>(
        client,
        `select d.id, e.url, m.body, d.tries
           from webhook_deliveries d
           join webhook_endpoints e on e.id = d.endpoint_id
           join webhook_messages m on m.id = d.message_id
          where d.status = 'pending' and e.disabled_at is null and left(e.url, $1) = $2
            and d.next_attempt_at <= $3 and (d.lease_until is null or d.lease_until <= $3)
          order by d.id limit $4
          for update of d skip locked`,
        [NOTIFY_ENDPOINT_PREFIX.length, NOTIFY_ENDPOINT_PREFIX, at, limit],
      );
      if (found.length > 0) {
        await run(
          client,
          'update webhook_deliveries set lease_until = $1, lease_token = $2 where id = any($3::bigint[])',
          [new Date(now.getTime() + LEASE_MS).toISOString(), this.#token, found.map((r) => r.id)],
        );
      }
      return found;
    });
    return due.map((row) => ({
      id: row.id,
      targetId: row.url.slice(NOTIFY_ENDPOINT_PREFIX.length),
      message: JSON.parse(row.body) as NotifyMessage,
      attempts: row.tries,
    }));
  }

  async complete(id: number, result: NotificationResult): Promise<void> {
    const now = new Date().toISOString();
    if (result.status === 'delivered') {
      await run(this.#ctx.pool, `${BASE}, status = 'succeeded', finished_at = $1 where id = $2`, [now, id]);
    } else if (result.status === 'pending') {
      await run(this.#ctx.pool, `${BASE}, tries = tries + 1, next_attempt_at = $1 where id = $2`, [
        result.nextAttemptAt.toISOString(),
        id,
      ]);
    } else {
      await run(
        this.#ctx.pool,
        `${BASE}, tries = tries + 1, status = 'failed', finished_at = $1 where id = $2`,
        [now, id],
      );
    }
  }

  async disableTarget(targetId: string, reason: string): Promise<void> {
    await run(
      this.#ctx.pool,
      `update webhook_endpoints set disabled_at = $1, disabled_reason = $2
        where url = $3 and disabled_at is null`,
      [new Date().toISOString(), reason, `${NOTIFY_ENDPOINT_PREFIX}${targetId}`],
    );
  }

  async release(): Promise<void> {
    await run(
      this.#ctx.pool,
      `update webhook_deliveries set lease_until = null, lease_token = null
        where lease_token = $1 and status = 'pending'`,
      [this.#token],
    );
  }
}
