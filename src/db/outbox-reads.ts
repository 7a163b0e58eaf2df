import type { OutboxPort } from './outbox-port.js';
import type { DeliveryStatus, WebhookAttemptRow } from './schema.js';
import type { SqlPort } from './sql-port.js';
import type { DeliveryFilter, DeliveryRow } from './store.js';

// The outbox as the API, the CLI and /metrics read it, written once for both stores.

const SELECT = `select d.id, m.webhook_id, m.type, m.run_id, e.id, e.url, e.disabled_at, e.disabled_reason,
         d.status, d.attempts, d.next_attempt_at, d.created_at, d.finished_at
    from webhook_deliveries d
    join webhook_messages m on m.id = d.message_id
    join webhook_endpoints e on e.id = d.endpoint_id`;

type DeliveryTuple = [
  number,
  string,
  string,
  number,
  number,
  string,
  string | null,
  string | null,
  DeliveryStatus,
  number,
  string,
  string,
  string | null,
];

const deliveryOf = (
  [
    id,
    webhookId,
    type,
    runId,
    endpointId,
    url,
    disabledAt,
    disabledReason,
    status,
    attempts,
    nextAttemptAt,
    createdAt,
    finishedAt,
  ]: DeliveryTuple,
  lastAttempt: WebhookAttemptRow | null,
): DeliveryRow => ({
  id,
  webhookId,
  type,
  runId,
  endpointId,
  url,
  disabledAt,
  disabledReason,
  status,
  attempts,
  nextAttemptAt,
  createdAt,
  finishedAt,
  lastAttempt,
});

const ATTEMPT = `select id, delivery_id, at, duration_ms, http_status, ok, error_code, error, response_excerpt
                   from webhook_attempts`;

type AttemptTuple = [
  number,
  number,
  string,
  number,
  number | null,
  boolean | number,
  string | null,
  string | null,
  string | null,
];

// SQLite keeps the boolean as 1 or 0.
const attemptOf = ([
  id,
  deliveryId,
  at,
  durationMs,
  httpStatus,
  ok,
  errorCode,
  error,
  responseExcerpt,
]: AttemptTuple): WebhookAttemptRow => ({
  id,
  deliveryId,
  at,
  durationMs,
  httpStatus,
  ok: ok === true || ok === 1,
  errorCode,
  error,
  responseExcerpt,
});

/** Webhook deliveries only: the notification rows that share the outbox are not the webhooks'. */
const WEBHOOKS_ONLY = `d.endpoint_id in (select id from webhook_endpoints where channel = 'webhook')`;

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

async function lastAttemptOf(port: SqlPort, deliveryId: number): Promise<WebhookAttemptRow | null> {
  const [last] = await port.rows<AttemptTuple>(`${ATTEMPT} where delivery_id = ? order by id desc limit 1`, [
    deliveryId,
  ]);
  return last ? attemptOf(last) : null;
}

/** Deliveries, newest first, each with its latest attempt. */
export async function listDeliveries(port: OutboxPort, filter: DeliveryFilter): Promise<DeliveryRow[]> {
  const w = where(filter);
  const found = await port.rows<DeliveryTuple>(`${SELECT}${w.sql} order by d.id desc limit ? offset ?`, [
    ...w.params,
    filter.limit,
    filter.offset ?? 0,
  ]);
  return Promise.all(found.map(async (row) => deliveryOf(row, await lastAttemptOf(port, row[0]))));
}

export async function countDeliveries(
  port: OutboxPort,
  filter: Omit<DeliveryFilter, 'limit'>,
): Promise<number> {
  const w = where(filter);
  const [row] = await port.rows<[number]>(`select count(*) from webhook_deliveries d${w.sql}`, w.params);
  return row?.[0] ?? 0;
}

/** One delivery with every attempt, oldest first; undefined when there is none. */
export async function getDelivery(
  port: OutboxPort,
  id: number,
): Promise<{ delivery: DeliveryRow; attempts: WebhookAttemptRow[] } | undefined> {
  const [row] = await port.rows<DeliveryTuple>(`${SELECT} where d.id = ?`, [id]);
  if (!row) return undefined;
  const attempts = (await port.rows<AttemptTuple>(`${ATTEMPT} where delivery_id = ? order by id`, [id])).map(
    attemptOf,
  );
  return { delivery: deliveryOf(row, attempts.at(-1) ?? null), attempts };
}

/** Deliveries still to send to the given endpoints. */
export async function pendingDeliveries(port: OutboxPort, urls: readonly string[]): Promise<number> {
  const list = port.list('text', urls);
  const [row] = await port.rows<[number]>(
    `select count(*) from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.status = 'pending' and e.url in ${list.sql}`,
    [list.param],
  );
  return row?.[0] ?? 0;
}

/**
 * Deliveries by status (in the order of the statuses' names, on both stores), and disabled
 * endpoints: the figures /metrics reads at scrape time.
 */
export async function deliveryFigures(
  port: OutboxPort,
): Promise<{ byStatus: Map<DeliveryStatus, number>; disabledEndpoints: number }> {
  const byStatus = await port.rows<[DeliveryStatus, number]>(
    `select status, count(*) from webhook_deliveries d where ${WEBHOOKS_ONLY} group by status order by status`,
  );
  const [disabled] = await port.rows<[number]>(
    `select count(*) from webhook_endpoints
      where disabled_at is not null and channel = 'webhook'`,
  );
  return { byStatus: new Map(byStatus), disabledEndpoints: disabled?.[0] ?? 0 };
}
