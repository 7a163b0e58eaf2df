import type { OutboxPort } from './outbox-port.js';
import { selected } from './port-shapes.js';
import type { DeliveryStatus, WebhookAttemptRow } from './schema.js';
import type { SqlPort } from './sql-port.js';
import type { DeliveryFilter, DeliveryRow } from './store.js';

// The outbox as the API, the CLI and /metrics read it, written once for both stores.

const DELIVERY = selected<Omit<DeliveryRow, 'lastAttempt'>>({
  id: 'd.id',
  webhookId: 'm.webhook_id',
  type: 'm.type',
  runId: 'm.run_id',
  endpointId: 'e.id',
  url: 'e.url',
  disabledAt: 'e.disabled_at',
  disabledReason: 'e.disabled_reason',
  status: 'd.status',
  attempts: 'd.attempts',
  nextAttemptAt: 'd.next_attempt_at',
  createdAt: 'd.created_at',
  finishedAt: 'd.finished_at',
});

const SELECT = `select ${DELIVERY.sql}
    from webhook_deliveries d
    join webhook_messages m on m.id = d.message_id
    join webhook_endpoints e on e.id = d.endpoint_id`;

// SQLite keeps the boolean as 1 or 0.
const ATTEMPT = selected<Omit<WebhookAttemptRow, 'ok'> & { ok: boolean | number }>({
  id: 'id',
  deliveryId: 'delivery_id',
  at: 'at',
  durationMs: 'duration_ms',
  httpStatus: 'http_status',
  ok: 'ok',
  errorCode: 'error_code',
  error: 'error',
  responseExcerpt: 'response_excerpt',
});

/** A delivery's attempts, oldest first; `last`: its latest only. */
async function attemptsOf(port: SqlPort, deliveryId: number, last = false): Promise<WebhookAttemptRow[]> {
  const rows = await port.rows(
    `select ${ATTEMPT.sql} from webhook_attempts where delivery_id = ? order by id${last ? ' desc limit 1' : ''}`,
    [deliveryId],
  );
  return rows.map((row) => {
    const attempt = ATTEMPT.of(row);
    return { ...attempt, ok: attempt.ok === true || attempt.ok === 1 };
  });
}

/** Webhook deliveries only: the notification rows that share the outbox are not the webhooks'. */
const WEBHOOKS_ONLY = `d.endpoint_id in (select id from webhook_endpoints where channel = 'webhook')`;

function where(filter: Omit<DeliveryFilter, 'limit' | 'offset'>): { sql: string; params: unknown[] } {
  const given = (
    [
      ['d.status', filter.status],
      ['d.endpoint_id', filter.endpoint],
    ] as const
  ).filter(([, value]) => value !== undefined);
  const clauses = [WEBHOOKS_ONLY, ...given.map(([column]) => `${column} = ?`)];
  return { sql: ` where ${clauses.join(' and ')}`, params: given.map(([, value]) => value) };
}

/** Deliveries, newest first, each with its latest attempt. */
export async function listDeliveries(port: OutboxPort, filter: DeliveryFilter): Promise<DeliveryRow[]> {
  const w = where(filter);
  const found = await port.rows(`${SELECT}${w.sql} order by d.id desc limit ? offset ?`, [
    ...w.params,
    filter.limit,
    filter.offset ?? 0,
  ]);
  return Promise.all(
    found.map(async (row) => {
      const delivery = DELIVERY.of(row);
      const [lastAttempt = null] = await attemptsOf(port, delivery.id, true);
      return { ...delivery, lastAttempt };
    }),
  );
}

export async function countDeliveries(
  port: OutboxPort,
  filter: Omit<DeliveryFilter, 'limit'>,
): Promise<number> {
  const w = where(filter);
  const [count = 0] = await port.values<number>(
    `select count(*) from webhook_deliveries d${w.sql}`,
    w.params,
  );
  return count;
}

/** One delivery with every attempt, oldest first; undefined when there is none. */
export async function getDelivery(
  port: OutboxPort,
  id: number,
): Promise<{ delivery: DeliveryRow; attempts: WebhookAttemptRow[] } | undefined> {
  const [row] = await port.rows(`${SELECT} where d.id = ?`, [id]);
  if (!row) return undefined;
  const attempts = await attemptsOf(port, id);
  return { delivery: { ...DELIVERY.of(row), lastAttempt: attempts.at(-1) ?? null }, attempts };
}

/** Deliveries still to send to the given endpoints. */
export async function pendingDeliveries(port: OutboxPort, urls: readonly string[]): Promise<number> {
  const list = port.list('text', urls);
  const [count = 0] = await port.values<number>(
    `select count(*) from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.status = 'pending' and e.url in ${list.sql}`,
    [list.param],
  );
  return count;
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
  const [disabledEndpoints = 0] = await port.values<number>(
    `select count(*) from webhook_endpoints where disabled_at is not null and channel = 'webhook'`,
  );
  return { byStatus: new Map(byStatus), disabledEndpoints };
}
