import { changesFinishedWithinSql, PG_CHANGE_ROWS_SQL } from '../change-columns.js';
import { randomBytes } from 'node:crypto';
import type { NotifyMessage } from '../../notify/message.js';
import type { NotificationOutbox, NotificationResult, OutboxNotification } from '../../notify/outbox.js';
import { NOTIFY_ENDPOINT_PREFIX } from '../endpoint-keys.js';
import type { DigestPlan } from '../run-commit.js';
import type { ChangeRow } from '../schema.js';
import type { DisabledNotifyTarget } from '../store.js';
import { ADVISORY_NAMESPACE, DIGEST_LOCK } from './advisory-keys.js';
import { announceOutboxChange } from './commit-watch.js';
import type { PgContext } from './context.js';
import { endpointId, firstListingRun, newMessageIds } from './outbox.js';
import { changeSubjects } from './pages.js';
import { claimDueNotifications } from '../outbox-claim.js';
import { pgTransactionPort } from './sql-port.js';
import { one, rows, run, transaction, type Queryable, type Tx } from './sql.js';

// The notification rows of the webhook outbox on PostgreSQL: the twin of src/db/sqlite/notify-outbox.ts
// (the claim is src/db/outbox-claim.ts).

/** How long a claimed row stays out of other workers' reach: longer than any one send. */
const LEASE_MS = 5 * 60_000;

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
    const due = await claimDueNotifications(pgTransactionPort(this.#ctx.pool), {
      now,
      limit,
      leaseMs: LEASE_MS,
      token: this.#token,
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

  /**
   * Writes the digest of `plan`'s period to each target that has none yet, in one transaction: the
   * key `digest_<targetId>_<period end>` (the message's unique webhook_id) makes a second writer,
   * another instance or a later pass, a no-op; the writers take turns on an advisory lock, so the
   * second sees the first's rows rather than failing on them. Answers the deliveries written.
   */
  async enqueueDigest(plan: DigestPlan): Promise<number> {
    return transaction(this.#ctx.pool, async (tx) => {
      await run(tx.client, 'select pg_advisory_xact_lock($1, $2)', [ADVISORY_NAMESPACE, DIGEST_LOCK]);
      return writeDigest(tx, plan);
    });
  }

  async countPending(): Promise<number> {
    const found = await one<{ n: number }>(
      this.#ctx.pool,
      `select count(*) as n from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where d.status = 'pending' and e.disabled_at is null and left(e.url, $1) = $2`,
      [NOTIFY_ENDPOINT_PREFIX.length, NOTIFY_ENDPOINT_PREFIX],
    );
    return found?.n ?? 0;
  }

  async release(): Promise<void> {
    const released = await run(
      this.#ctx.pool,
      `update webhook_deliveries set lease_until = null, lease_token = null
        where lease_token = $1 and status = 'pending'`,
      [this.#token],
    );
    if (released > 0) await announceOutboxChange(this.#ctx.pool);
  }
}

const IS_NOTIFY = `left(url, ${NOTIFY_ENDPOINT_PREFIX.length}) = '${NOTIFY_ENDPOINT_PREFIX}'`;

/** The notification targets a permanent refusal disabled, oldest first. */
export async function disabledNotifyTargets(db: Queryable): Promise<DisabledNotifyTarget[]> {
  const found = await rows<{ url: string; disabledAt: string; reason: string | null }>(
    db,
    `select url, disabled_at as "disabledAt", disabled_reason as reason from webhook_endpoints
      where disabled_at is not null and ${IS_NOTIFY} order by disabled_at, id`,
  );
  return found.map((r) => ({
    targetId: r.url.slice(NOTIFY_ENDPOINT_PREFIX.length),
    disabledAt: r.disabledAt,
    reason: r.reason,
  }));
}

/** Re-enables one disabled notification target, or all of them (null); answers the ids enabled. */
export async function enableNotifyTargets(db: Queryable, targetId: string | null): Promise<string[]> {
  const found = await rows<{ url: string }>(
    db,
    `update webhook_endpoints set disabled_at = null, disabled_reason = null
      where disabled_at is not null and ${IS_NOTIFY} and ($1::text is null or url = $1::text) returning url`,
    [targetId === null ? null : `${NOTIFY_ENDPOINT_PREFIX}${targetId}`],
  );
  if (found.length > 0) await announceOutboxChange(db);
  return found.map((r) => r.url.slice(NOTIFY_ENDPOINT_PREFIX.length)).sort();
}

const digestKey = (targetId: string, to: string) => `digest_${targetId}_${to}`;

/** The period's digest for each target of `plan` that has none yet; the deliveries written. */
async function writeDigest(tx: Tx, plan: DigestPlan): Promise<number> {
  const written = await rows<{ webhookId: string }>(
    tx.client,
    'select webhook_id as "webhookId" from webhook_messages where webhook_id = any($1::text[])',
    [plan.targetIds.map((id) => digestKey(id, plan.to))],
  );
  const have = new Set(written.map((r) => r.webhookId));
  const missing = plan.targetIds.filter((id) => !have.has(digestKey(id, plan.to)));
  if (missing.length === 0) return 0;
  // The composer reads synchronously: the period's changes and their subjects are read first.
  const changes = await rows<ChangeRow>(
    tx.client,
    `${PG_CHANGE_ROWS_SQL} where ${changesFinishedWithinSql('c', 'r.finished_at >= $1 and r.finished_at < $2')} order by c.id`,
    [plan.from, plan.to],
  );
  const subjects = await changeSubjects(tx.client, changes);
  const message = plan.message({
    changes: () => changes,
    firstListingRun: await firstListingRun(tx.client),
    subjectsOf: (asked) =>
      new Map(
        asked.flatMap((row) => {
          const subject = subjects.get(row.id);
          return subject === undefined ? [] : [[row.id, subject] as const];
        }),
      ),
  });
  if (message === null) return 0;
  const runId = changes.length === 0 ? null : Math.max(...changes.map((row) => row.runId));
  const now = new Date().toISOString();
  for (const targetId of missing) {
    const endpoint = await endpointId(tx, `${NOTIFY_ENDPOINT_PREFIX}${targetId}`, now);
    const [messageId] = await newMessageIds(tx, [
      [digestKey(targetId, plan.to), message.type, runId, now, message.body],
    ]);
    await run(
      tx.client,
      `insert into webhook_deliveries (message_id, endpoint_id, status, next_attempt_at, created_at)
       values ($1, $2, 'pending', $3, $3)`,
      [messageId, endpoint, now],
    );
  }
  return missing.length;
}
