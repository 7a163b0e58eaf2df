import { randomBytes } from 'node:crypto';
import type { NotifyMessage } from '../../notify/message.js';
import type { NotificationOutbox, NotificationResult, OutboxNotification } from '../../notify/outbox.js';
import { NOTIFY_ENDPOINT_PREFIX } from '../endpoint-keys.js';
import type { DigestPlan } from '../run-commit.js';
import { CHANGE_ROWS_SQL, changesFinishedWithinSql } from '../change-columns.js';
import { changeSubjects } from '../page-queries.js';
import type { ChangeRow } from '../schema.js';
import type { MirrorDatabase } from '../open.js';
import type { DisabledNotifyTarget } from '../store.js';
import { firstListingRun } from './outbox.js';
import { claimDueNotifications } from '../outbox-claim.js';
import { transactionPortOf } from './sql-port.js';

/** How long a claimed row stays out of other workers' reach: longer than any one send. */
const LEASE_MS = 5 * 60_000;

/**
 * The notification rows of the webhook outbox (endpoints keyed `notify:<targetId>`): the rows are
 * written by the run's own transaction (`notifyRunOutbox`), so `enqueue` has nothing to do here.
 */
export class SqliteNotificationOutbox implements NotificationOutbox {
  readonly #store: MirrorDatabase;
  readonly #token = randomBytes(8).toString('hex');

  constructor(store: MirrorDatabase) {
    this.#store = store;
  }

  enqueue(): Promise<void> {
    return Promise.reject(new Error('notification rows are written by the run commit'));
  }

  /** Leases the due rows of enabled targets, oldest first. */
  async claim(now: Date, limit: number): Promise<OutboxNotification[]> {
    const rows = await claimDueNotifications(transactionPortOf(this.#store.sqlite), {
      now,
      limit,
      leaseMs: LEASE_MS,
      token: this.#token,
    });
    return rows.map((row) => ({
      id: row.id,
      targetId: row.url.slice(NOTIFY_ENDPOINT_PREFIX.length),
      message: JSON.parse(row.body) as NotifyMessage,
      attempts: row.tries,
    }));
  }

  complete(id: number, result: NotificationResult): Promise<void> {
    const now = new Date().toISOString();
    const base =
      'update webhook_deliveries set attempts = attempts + 1, lease_until = null, lease_token = null';
    const sqlite = this.#store.sqlite;
    if (result.status === 'delivered') {
      sqlite.prepare(`${base}, status = 'succeeded', finished_at = ? where id = ?`).run(now, id);
    } else if (result.status === 'pending') {
      sqlite
        .prepare(`${base}, tries = tries + 1, next_attempt_at = ? where id = ?`)
        .run(result.nextAttemptAt.toISOString(), id);
    } else {
      sqlite
        .prepare(`${base}, tries = tries + 1, status = 'failed', finished_at = ? where id = ?`)
        .run(now, id);
    }
    return Promise.resolve();
  }

  disableTarget(targetId: string, reason: string): Promise<void> {
    this.#store.sqlite
      .prepare(
        `update webhook_endpoints set disabled_at = ?, disabled_reason = ?
          where url = ? and disabled_at is null`,
      )
      .run(new Date().toISOString(), reason, `${NOTIFY_ENDPOINT_PREFIX}${targetId}`);
    return Promise.resolve();
  }

  /**
   * Writes the digest of `plan`'s period to each target that has none yet, in one transaction: the
   * key `digest_<targetId>_<period end>` (the message's unique webhook_id) makes a second writer,
   * another instance or a later pass, a no-op. Answers the deliveries written.
   */
  enqueueDigest(plan: DigestPlan): Promise<number> {
    return Promise.resolve(this.#store.sqlite.transaction(() => writeDigest(this.#store, plan)).immediate());
  }

  countPending(): Promise<number> {
    const count = this.#store.sqlite
      .prepare(
        `select count(*) from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
          where d.status = 'pending' and e.disabled_at is null and substr(e.url, 1, ?) = ?`,
      )
      .pluck()
      .get(NOTIFY_ENDPOINT_PREFIX.length, NOTIFY_ENDPOINT_PREFIX) as number;
    return Promise.resolve(count);
  }

  release(): Promise<void> {
    this.#store.sqlite
      .prepare(
        `update webhook_deliveries set lease_until = null, lease_token = null
          where lease_token = ? and status = 'pending'`,
      )
      .run(this.#token);
    return Promise.resolve();
  }
}

const IS_NOTIFY = `substr(url, 1, ${NOTIFY_ENDPOINT_PREFIX.length}) = '${NOTIFY_ENDPOINT_PREFIX}'`;

/** The notification targets a permanent refusal disabled, oldest first. */
export function disabledNotifyTargets(store: MirrorDatabase): DisabledNotifyTarget[] {
  const rows = store.sqlite
    .prepare(
      `select url, disabled_at as disabledAt, disabled_reason as reason from webhook_endpoints
        where disabled_at is not null and ${IS_NOTIFY} order by disabled_at, id`,
    )
    .all() as { url: string; disabledAt: string; reason: string | null }[];
  return rows.map((r) => ({
    targetId: r.url.slice(NOTIFY_ENDPOINT_PREFIX.length),
    disabledAt: r.disabledAt,
    reason: r.reason,
  }));
}

/** Re-enables one disabled notification target, or all of them (null); answers the ids enabled. */
export function enableNotifyTargets(store: MirrorDatabase, targetId: string | null): string[] {
  const urls = store.sqlite
    .prepare(
      `update webhook_endpoints set disabled_at = null, disabled_reason = null
        where disabled_at is not null and ${IS_NOTIFY} and (? is null or url = ?) returning url`,
    )
    .pluck()
    .all(targetId, targetId === null ? null : `${NOTIFY_ENDPOINT_PREFIX}${targetId}`) as string[];
  return urls.map((url) => url.slice(NOTIFY_ENDPOINT_PREFIX.length)).sort();
}

/** The changes of a digest's period: of the runs that finished within it (runs commit in order). */
const DIGEST_RUNS = changesFinishedWithinSql('c', 'r.finished_at >= ? and r.finished_at < ?');

const digestKey = (targetId: string, to: string) => `digest_${targetId}_${to}`;

function writeDigest(store: MirrorDatabase, plan: DigestPlan): number {
  const exists = store.sqlite.prepare('select 1 from webhook_messages where webhook_id = ?').pluck();
  const missing = plan.targetIds.filter((id) => exists.get(digestKey(id, plan.to)) === undefined);
  if (missing.length === 0) return 0;
  const changes = store.sqlite.prepare(`${CHANGE_ROWS_SQL} where ${DIGEST_RUNS} order by c.id`);
  const message = plan.message({
    changes: () => changes.iterate(plan.from, plan.to) as IterableIterator<ChangeRow>,
    firstListingRun: firstListingRun(store),
    subjectsOf: (rows) => changeSubjects(store, rows),
  });
  if (message === null) return 0;
  const runId = store.sqlite
    .prepare(`select max(c.run_id) from changes c where ${DIGEST_RUNS}`)
    .pluck()
    .get(plan.from, plan.to) as number;
  const now = new Date().toISOString();
  for (const targetId of missing) {
    const url = `${NOTIFY_ENDPOINT_PREFIX}${targetId}`;
    store.sqlite
      .prepare('insert into webhook_endpoints (url, created_at) values (?, ?) on conflict (url) do nothing')
      .run(url, now);
    const messageId = store.sqlite
      .prepare(
        'insert into webhook_messages (webhook_id, type, run_id, created_at, body) values (?, ?, ?, ?, ?)',
      )
      .run(digestKey(targetId, plan.to), message.type, runId, now, message.body).lastInsertRowid;
    store.sqlite
      .prepare(
        `insert into webhook_deliveries (message_id, endpoint_id, status, next_attempt_at, created_at)
         values (?, (select id from webhook_endpoints where url = ?), 'pending', ?, ?)`,
      )
      .run(messageId, url, now, now);
  }
  return missing.length;
}
