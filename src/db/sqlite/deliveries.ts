import type { Claim } from '../outbox-claim.js';
import type { MirrorDatabase } from '../open.js';
import type { DeliveryStatus, WebhookAttemptRow } from '../schema.js';
import { NOTIFY_ENDPOINT_PREFIX } from '../endpoint-keys.js';

/** One attempt as the delivery log records it. */
export type AttemptRecord = Pick<
  WebhookAttemptRow,
  'at' | 'durationMs' | 'httpStatus' | 'ok' | 'errorCode' | 'error'
> & {
  excerpt: string | null;
};

export type AttemptOutcome =
  { kind: 'succeeded' } | { kind: 'gone' } | { kind: 'retry'; nextAttemptAt: string } | { kind: 'failed' };

/** Logs the attempt and moves the delivery on, in one transaction. */
export function recordAttempt(
  store: MirrorDatabase,
  claim: Claim,
  result: AttemptRecord,
  outcome: AttemptOutcome,
): void {
  store.sqlite
    .transaction(() => {
      store.sqlite
        .prepare(
          `insert into webhook_attempts
             (delivery_id, at, duration_ms, http_status, ok, error_code, error, response_excerpt)
           values (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          claim.deliveryId,
          result.at,
          result.durationMs,
          result.httpStatus,
          result.ok ? 1 : 0,
          result.errorCode,
          result.error,
          result.excerpt,
        );
      const now = new Date().toISOString();
      const base =
        'update webhook_deliveries set attempts = attempts + 1, lease_until = null, lease_token = null';
      switch (outcome.kind) {
        case 'succeeded':
          store.sqlite
            .prepare(`${base}, status = 'succeeded', finished_at = ? where id = ?`)
            .run(now, claim.deliveryId);
          break;
        case 'gone':
          // The delivery stays first in line: re-enabling the endpoint resumes where it stopped.
          store.sqlite.prepare(`${base} where id = ?`).run(claim.deliveryId);
          store.sqlite
            .prepare(
              'update webhook_endpoints set disabled_at = ?, disabled_reason = ? where id = ? and disabled_at is null',
            )
            .run(now, 'answered 410 Gone', claim.endpointId);
          break;
        case 'retry':
          store.sqlite
            .prepare(`${base}, tries = tries + 1, next_attempt_at = ? where id = ? and status = 'pending'`)
            .run(outcome.nextAttemptAt, claim.deliveryId);
          break;
        case 'failed':
          store.sqlite
            .prepare(
              `${base}, tries = tries + 1, status = 'failed', finished_at = ? where id = ? and status = 'pending'`,
            )
            .run(now, claim.deliveryId);
          break;
      }
    })
    .immediate();
}

/** Hands back a lease this process holds, so the next worker can send the delivery at once. */
export function releaseLease(store: MirrorDatabase, claim: Claim, token: string): void {
  store.sqlite
    .prepare(
      'update webhook_deliveries set lease_until = null, lease_token = null where id = ? and lease_token = ?',
    )
    .run(claim.deliveryId, token);
}

/**
 * Sends delivery `id` again (same message, same webhook-id) as soon as its endpoint's queue allows,
 * with a fresh retry schedule; re-enables its endpoint. False when no such delivery exists.
 */
export function redeliver(store: MirrorDatabase, id: number): boolean {
  return store.sqlite
    .transaction(() => {
      const now = new Date().toISOString();
      const changed = store.sqlite
        .prepare(
          `update webhook_deliveries set status = 'pending', tries = 0, next_attempt_at = ?, finished_at = null
            where id = ?`,
        )
        .run(now, id).changes;
      if (changed === 0) return false;
      store.sqlite
        .prepare(
          `update webhook_endpoints set disabled_at = null, disabled_reason = null
            where id = (select endpoint_id from webhook_deliveries where id = ?)`,
        )
        .run(id);
      return true;
    })
    .immediate();
}

/** Re-enables an endpoint a 410 disabled; its pending deliveries resume in order. */
export function enableEndpoint(store: MirrorDatabase, endpointId: number): boolean {
  return (
    store.sqlite
      .prepare('update webhook_endpoints set disabled_at = null, disabled_reason = null where id = ?')
      .run(endpointId).changes > 0
  );
}

/** Deliveries still to send to the given endpoints. */
export function pendingDeliveries(store: MirrorDatabase, urls: readonly string[]): number {
  return store.sqlite
    .prepare(
      `select count(*) from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where d.status = 'pending' and e.url in (select value from json_each(?))`,
    )
    .pluck()
    .get(JSON.stringify(urls)) as number;
}

/** A delivery with its message and endpoint, as the API and the CLI list them. */
export interface DeliveryRow {
  id: number;
  webhookId: string;
  type: string;
  runId: number;
  endpointId: number;
  url: string;
  disabledAt: string | null;
  disabledReason: string | null;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string;
  createdAt: string;
  finishedAt: string | null;
  lastAttempt: WebhookAttemptRow | null;
}

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  endpoint?: number | undefined;
  limit: number;
  offset?: number;
}

const SELECT = `select d.id, m.webhook_id as webhookId, m.type, m.run_id as runId, e.id as endpointId, e.url,
         e.disabled_at as disabledAt, e.disabled_reason as disabledReason, d.status, d.attempts,
         d.next_attempt_at as nextAttemptAt, d.created_at as createdAt, d.finished_at as finishedAt
    from webhook_deliveries d
    join webhook_messages m on m.id = d.message_id
    join webhook_endpoints e on e.id = d.endpoint_id`;

const ATTEMPT = `select id, delivery_id as deliveryId, at, duration_ms as durationMs, http_status as httpStatus, ok,
              error_code as errorCode, error, response_excerpt as responseExcerpt
         from webhook_attempts`;

type AttemptColumns = Omit<WebhookAttemptRow, 'ok'> & { ok: number };
const attemptRow = (row: AttemptColumns): WebhookAttemptRow => ({ ...row, ok: row.ok === 1 });

/** Webhook deliveries only: the notification rows that share the outbox are not the webhooks'. */
const WEBHOOKS_ONLY = `d.endpoint_id not in (select id from webhook_endpoints where substr(url, 1, ${NOTIFY_ENDPOINT_PREFIX.length}) = '${NOTIFY_ENDPOINT_PREFIX}')`;

function where(filter: Omit<DeliveryFilter, 'limit' | 'offset'>): { sql: string; params: unknown[] } {
  const clauses: string[] = [WEBHOOKS_ONLY];
  const params: unknown[] = [];
  if (filter.status !== undefined) {
    clauses.push('d.status = ?');
    params.push(filter.status);
  }
  if (filter.endpoint !== undefined) {
    clauses.push('d.endpoint_id = ?');
    params.push(filter.endpoint);
  }
  return { sql: ` where ${clauses.join(' and ')}`, params };
}

function withLastAttempt(store: MirrorDatabase, row: Omit<DeliveryRow, 'lastAttempt'>): DeliveryRow {
  const last = store.sqlite
    .prepare(`${ATTEMPT} where delivery_id = ? order by id desc limit 1`)
    .get(row.id) as AttemptColumns | undefined;
  return { ...row, lastAttempt: last ? attemptRow(last) : null };
}

/** Deliveries, newest first, each with its latest attempt. */
export function listDeliveries(store: MirrorDatabase, filter: DeliveryFilter): DeliveryRow[] {
  const w = where(filter);
  const rows = store.sqlite
    .prepare(`${SELECT}${w.sql} order by d.id desc limit ? offset ?`)
    .all(...w.params, filter.limit, filter.offset ?? 0) as Omit<DeliveryRow, 'lastAttempt'>[];
  return rows.map((row) => withLastAttempt(store, row));
}

export function countDeliveries(store: MirrorDatabase, filter: Omit<DeliveryFilter, 'limit'>): number {
  const w = where(filter);
  return store.sqlite
    .prepare(`select count(*) from webhook_deliveries d${w.sql}`)
    .pluck()
    .get(...w.params) as number;
}

/** One delivery with every attempt, oldest first; undefined when there is none. */
export function getDelivery(
  store: MirrorDatabase,
  id: number,
): { delivery: DeliveryRow; attempts: WebhookAttemptRow[] } | undefined {
  const row = store.sqlite.prepare(`${SELECT} where d.id = ?`).get(id) as
    Omit<DeliveryRow, 'lastAttempt'> | undefined;
  if (!row) return undefined;
  const attempts = store.sqlite
    .prepare(`${ATTEMPT} where delivery_id = ? order by id`)
    .all(id) as AttemptColumns[];
  return { delivery: withLastAttempt(store, row), attempts: attempts.map(attemptRow) };
}

/** Deliveries by status, and disabled endpoints: the figures /metrics reads at scrape time. */
export function deliveryFigures(store: MirrorDatabase): {
  byStatus: Map<DeliveryStatus, number>;
  disabledEndpoints: number;
} {
  const rows = store.sqlite
    .prepare(`select status, count(*) as n from webhook_deliveries d where ${WEBHOOKS_ONLY} group by status`)
    .all() as { status: DeliveryStatus; n: number }[];
  const disabledEndpoints = store.sqlite
    .prepare(
      `select count(*) from webhook_endpoints
        where disabled_at is not null and substr(url, 1, ${NOTIFY_ENDPOINT_PREFIX.length}) != '${NOTIFY_ENDPOINT_PREFIX}'`,
    )
    .pluck()
    .get() as number;
  return { byStatus: new Map(rows.map((r) => [r.status, r.n])), disabledEndpoints };
}
