import { NOTIFY_ENDPOINT_PREFIX } from '../endpoint-keys.js';
import type { DeliveryStatus, WebhookAttemptRow } from '../schema.js';
import type { Claim } from '../outbox-claim.js';
import type { AttemptOutcome, AttemptRecord, DeliveryFilter, DeliveryRow } from '../sqlite/deliveries.js';
import { announceOutboxChange } from './commit-watch.js';
import type { PgContext } from './context.js';
import { one, rows, run, transaction, type Queryable } from './sql.js';

// The webhook outbox on PostgreSQL: the twin of src/db/sqlite/deliveries.ts (the claim is
// src/db/outbox-claim.ts).

const BASE = 'update webhook_deliveries set attempts = attempts + 1, lease_until = null, lease_token = null';

async function moveOn(db: Queryable, claim: Claim, outcome: AttemptOutcome, now: string): Promise<void> {
  switch (outcome.kind) {
    case 'succeeded':
      await run(db, `${BASE}, status = 'succeeded', finished_at = $1 where id = $2`, [now, claim.deliveryId]);
      return;
    case 'gone':
      // The delivery stays first in line: re-enabling the endpoint resumes where it stopped.
      await run(db, `${BASE} where id = $1`, [claim.deliveryId]);
      await run(
        db,
        'update webhook_endpoints set disabled_at = $1, disabled_reason = $2 where id = $3 and disabled_at is null',
        [now, 'answered 410 Gone', claim.endpointId],
      );
      return;
    case 'retry':
      await run(db, `${BASE}, tries = tries + 1, next_attempt_at = $1 where id = $2 and status = 'pending'`, [
        outcome.nextAttemptAt,
        claim.deliveryId,
      ]);
      return;
    case 'failed':
      await run(
        db,
        `${BASE}, tries = tries + 1, status = 'failed', finished_at = $1 where id = $2 and status = 'pending'`,
        [now, claim.deliveryId],
      );
  }
}

export async function recordAttempt(
  ctx: PgContext,
  claim: Claim,
  result: AttemptRecord,
  outcome: AttemptOutcome,
): Promise<void> {
  await transaction(ctx.pool, async ({ client }) => {
    await run(
      client,
      `insert into webhook_attempts
         (delivery_id, at, duration_ms, http_status, ok, error_code, error, response_excerpt)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        claim.deliveryId,
        result.at,
        result.durationMs,
        result.httpStatus,
        result.ok,
        result.errorCode,
        result.error,
        result.excerpt,
      ],
    );
    await moveOn(client, claim, outcome, new Date().toISOString());
  });
}

export async function releaseLease(ctx: PgContext, claim: Claim, token: string): Promise<void> {
  const changed = await run(
    ctx.pool,
    'update webhook_deliveries set lease_until = null, lease_token = null where id = $1 and lease_token = $2',
    [claim.deliveryId, token],
  );
  if (changed > 0) await announceOutboxChange(ctx.pool);
}

export async function redeliver(ctx: PgContext, id: number): Promise<boolean> {
  const done = await transaction(ctx.pool, async ({ client }) => {
    const changed = await run(
      client,
      `update webhook_deliveries set status = 'pending', tries = 0, next_attempt_at = $1, finished_at = null
        where id = $2`,
      [new Date().toISOString(), id],
    );
    if (changed === 0) return false;
    await run(
      client,
      `update webhook_endpoints set disabled_at = null, disabled_reason = null
        where id = (select endpoint_id from webhook_deliveries where id = $1)`,
      [id],
    );
    return true;
  });
  if (done) await announceOutboxChange(ctx.pool);
  return done;
}

export async function enableEndpoint(ctx: PgContext, endpointId: number): Promise<boolean> {
  const changed = await run(
    ctx.pool,
    'update webhook_endpoints set disabled_at = null, disabled_reason = null where id = $1',
    [endpointId],
  );
  if (changed > 0) await announceOutboxChange(ctx.pool);
  return changed > 0;
}

export async function pendingDeliveries(ctx: PgContext, urls: readonly string[]): Promise<number> {
  const row = await one<{ n: number }>(
    ctx.pool,
    `select count(*) as n from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.status = 'pending' and e.url = any($1::text[])`,
    [[...urls]],
  );
  return row?.n ?? 0;
}

const SELECT = `select d.id, m.webhook_id as "webhookId", m.type, m.run_id as "runId", e.id as "endpointId", e.url,
         e.disabled_at as "disabledAt", e.disabled_reason as "disabledReason", d.status, d.attempts,
         d.next_attempt_at as "nextAttemptAt", d.created_at as "createdAt", d.finished_at as "finishedAt"
    from webhook_deliveries d
    join webhook_messages m on m.id = d.message_id
    join webhook_endpoints e on e.id = d.endpoint_id`;

const ATTEMPT = `select id, delivery_id as "deliveryId", at, duration_ms as "durationMs", http_status as "httpStatus", ok,
              error_code as "errorCode", error, response_excerpt as "responseExcerpt"
         from webhook_attempts`;

/** Webhook deliveries only: the notification rows that share the outbox are not the webhooks'. */
const WEBHOOKS_ONLY = `d.endpoint_id not in (select id from webhook_endpoints where left(url, ${NOTIFY_ENDPOINT_PREFIX.length}) = '${NOTIFY_ENDPOINT_PREFIX}')`;

function where(filter: Omit<DeliveryFilter, 'limit' | 'offset'>): { sql: string; params: unknown[] } {
  const clauses: string[] = [WEBHOOKS_ONLY];
  const params: unknown[] = [];
  if (filter.status !== undefined) {
    params.push(filter.status);
    clauses.push(`d.status = $${params.length}`);
  }
  if (filter.endpoint !== undefined) {
    params.push(filter.endpoint);
    clauses.push(`d.endpoint_id = $${params.length}`);
  }
  return { sql: ` where ${clauses.join(' and ')}`, params };
}

async function withLastAttempt(ctx: PgContext, row: Omit<DeliveryRow, 'lastAttempt'>): Promise<DeliveryRow> {
  const last = await one<WebhookAttemptRow>(
    ctx.pool,
    `${ATTEMPT} where delivery_id = $1 order by id desc limit 1`,
    [row.id],
  );
  return { ...row, lastAttempt: last ?? null };
}

export async function listDeliveries(ctx: PgContext, filter: DeliveryFilter): Promise<DeliveryRow[]> {
  const w = where(filter);
  const n = w.params.length;
  const found = await rows<Omit<DeliveryRow, 'lastAttempt'>>(
    ctx.pool,
    `${SELECT}${w.sql} order by d.id desc limit $${n + 1} offset $${n + 2}`,
    [...w.params, filter.limit, filter.offset ?? 0],
  );
  return Promise.all(found.map((row) => withLastAttempt(ctx, row)));
}

export async function countDeliveries(
  ctx: PgContext,
  filter: Omit<DeliveryFilter, 'limit'>,
): Promise<number> {
  const w = where(filter);
  return (
    (await one<{ n: number }>(ctx.pool, `select count(*) as n from webhook_deliveries d${w.sql}`, w.params))
      ?.n ?? 0
  );
}

export async function getDelivery(
  ctx: PgContext,
  id: number,
): Promise<{ delivery: DeliveryRow; attempts: WebhookAttemptRow[] } | undefined> {
  const row = await one<Omit<DeliveryRow, 'lastAttempt'>>(ctx.pool, `${SELECT} where d.id = $1`, [id]);
  if (!row) return undefined;
  const attempts = await rows<WebhookAttemptRow>(ctx.pool, `${ATTEMPT} where delivery_id = $1 order by id`, [
    id,
  ]);
  return { delivery: { ...row, lastAttempt: attempts.at(-1) ?? null }, attempts };
}

export async function deliveryFigures(
  ctx: PgContext,
): Promise<{ byStatus: Map<DeliveryStatus, number>; disabledEndpoints: number }> {
  const [byStatus, disabled] = await Promise.all([
    rows<{ status: DeliveryStatus; n: number }>(
      ctx.pool,
      `select status, count(*) as n from webhook_deliveries d where ${WEBHOOKS_ONLY} group by status order by status`,
    ),
    one<{ n: number }>(
      ctx.pool,
      `select count(*) as n from webhook_endpoints
        where disabled_at is not null and left(url, ${NOTIFY_ENDPOINT_PREFIX.length}) != '${NOTIFY_ENDPOINT_PREFIX}'`,
    ),
  ]);
  return { byStatus: new Map(byStatus.map((r) => [r.status, r.n])), disabledEndpoints: disabled?.n ?? 0 };
}
