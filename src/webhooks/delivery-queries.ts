import type { MirrorDatabase } from '../db/open.js';
import type { DeliveryStatus, WebhookAttemptRow } from '../db/schema.js';
import { endpointLabel } from './mask-url.js';

/** A delivery as the API and the CLI show it; the endpoint by its origin only (see endpointLabel). */
export interface DeliveryView {
  id: number;
  webhook_id: string;
  type: string;
  run: number;
  endpoint: { id: number; url: string; disabled: boolean; disabled_reason: string | null };
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  finished_at: string | null;
  last_attempt: AttemptView | null;
}

export interface AttemptView {
  at: string;
  duration_ms: number;
  http_status: number | null;
  ok: boolean;
  error: { code: string | null; message: string } | null;
  response_excerpt: string | null;
}

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  endpoint?: number | undefined;
  limit: number;
  offset?: number;
}

interface DeliveryJoinRow {
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
}

const SELECT = `select d.id, m.webhook_id as webhookId, m.type, m.run_id as runId, e.id as endpointId, e.url,
         e.disabled_at as disabledAt, e.disabled_reason as disabledReason, d.status, d.attempts,
         d.next_attempt_at as nextAttemptAt, d.created_at as createdAt, d.finished_at as finishedAt
    from webhook_deliveries d
    join webhook_messages m on m.id = d.message_id
    join webhook_endpoints e on e.id = d.endpoint_id`;

function where(filter: Omit<DeliveryFilter, 'limit' | 'offset'>): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filter.status !== undefined) {
    clauses.push('d.status = ?');
    params.push(filter.status);
  }
  if (filter.endpoint !== undefined) {
    clauses.push('d.endpoint_id = ?');
    params.push(filter.endpoint);
  }
  return { sql: clauses.length > 0 ? ` where ${clauses.join(' and ')}` : '', params };
}

/** Deliveries, newest first. */
export function listDeliveries(store: MirrorDatabase, filter: DeliveryFilter): DeliveryView[] {
  const w = where(filter);
  const rows = store.sqlite
    .prepare(`${SELECT}${w.sql} order by d.id desc limit ? offset ?`)
    .all(...w.params, filter.limit, filter.offset ?? 0) as DeliveryJoinRow[];
  return rows.map((row) => deliveryView(store, row));
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
): (DeliveryView & { attempt_log: AttemptView[] }) | undefined {
  const row = store.sqlite.prepare(`${SELECT} where d.id = ?`).get(id) as DeliveryJoinRow | undefined;
  if (!row) return undefined;
  const attempts = store.sqlite
    .prepare(
      `select id, delivery_id as deliveryId, at, duration_ms as durationMs, http_status as httpStatus, ok,
              error_code as errorCode, error, response_excerpt as responseExcerpt
         from webhook_attempts where delivery_id = ? order by id`,
    )
    .all(id) as (Omit<WebhookAttemptRow, 'ok'> & { ok: number })[];
  return { ...deliveryView(store, row), attempt_log: attempts.map(attemptView) };
}

function deliveryView(store: MirrorDatabase, row: DeliveryJoinRow): DeliveryView {
  const last = store.sqlite
    .prepare(
      `select id, delivery_id as deliveryId, at, duration_ms as durationMs, http_status as httpStatus, ok,
              error_code as errorCode, error, response_excerpt as responseExcerpt
         from webhook_attempts where delivery_id = ? order by id desc limit 1`,
    )
    .get(row.id) as (Omit<WebhookAttemptRow, 'ok'> & { ok: number }) | undefined;
  return {
    id: row.id,
    webhook_id: row.webhookId,
    type: row.type,
    run: row.runId,
    endpoint: {
      id: row.endpointId,
      url: endpointLabel(row.url),
      disabled: row.disabledAt !== null,
      disabled_reason: row.disabledReason,
    },
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? row.nextAttemptAt : null,
    created_at: row.createdAt,
    finished_at: row.finishedAt,
    last_attempt: last ? attemptView(last) : null,
  };
}

function attemptView(row: Omit<WebhookAttemptRow, 'ok'> & { ok: number }): AttemptView {
  return {
    at: row.at,
    duration_ms: row.durationMs,
    http_status: row.httpStatus,
    ok: row.ok === 1,
    error: row.error === null ? null : { code: row.errorCode, message: row.error },
    response_excerpt: row.responseExcerpt,
  };
}

/** Deliveries by status, and disabled endpoints: the figures /metrics reads at scrape time. */
export function deliveryFigures(store: MirrorDatabase): {
  byStatus: Map<DeliveryStatus, number>;
  disabledEndpoints: number;
} {
  const rows = store.sqlite
    .prepare('select status, count(*) as n from webhook_deliveries group by status')
    .all() as { status: DeliveryStatus; n: number }[];
  const disabledEndpoints = store.sqlite
    .prepare('select count(*) from webhook_endpoints where disabled_at is not null')
    .pluck()
    .get() as number;
  return { byStatus: new Map(rows.map((r) => [r.status, r.n])), disabledEndpoints };
}
