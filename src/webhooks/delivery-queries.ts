import type { DeliveryFilter, DeliveryRow, Store } from '../db/store.js';
import type { DeliveryStatus, WebhookAttemptRow } from '../db/schema.js';
import { endpointLabel } from './mask-url.js';
import { WEBHOOK_ENDPOINT_PREFIX, type EndpointKeys } from '../db/endpoint-keys.js';

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

/**
 * Each configured URL's masked label by its endpoint key in the store: the database holds only the
 * key, so a view names an endpoint by the configured URL it comes from, or by its key when none does.
 */
function labelsOf(keys: EndpointKeys, configuredUrls: readonly string[]): Map<string, string> {
  return new Map(configuredUrls.map((url) => [keys.webhook(url), endpointLabel(url)]));
}

/** Deliveries, newest first; endpoints named by `configuredUrls` (WEBHOOK_URLS) masked, others by key. */
export async function listDeliveries(
  store: Store,
  filter: DeliveryFilter,
  configuredUrls: readonly string[] = [],
): Promise<DeliveryView[]> {
  const labels = labelsOf(store.endpointKeys, configuredUrls);
  return (await store.listDeliveries(filter)).map((row) => deliveryView(row, labels));
}

/** One delivery with every attempt, oldest first; undefined when there is none. */
export async function getDelivery(
  store: Store,
  id: number,
  configuredUrls: readonly string[] = [],
): Promise<(DeliveryView & { attempt_log: AttemptView[] }) | undefined> {
  const found = await store.getDelivery(id);
  if (!found) return undefined;
  const view = deliveryView(found.delivery, labelsOf(store.endpointKeys, configuredUrls));
  return { ...view, attempt_log: found.attempts.map(attemptView) };
}

function deliveryView(row: DeliveryRow, labels: ReadonlyMap<string, string>): DeliveryView {
  return {
    id: row.id,
    webhook_id: row.webhookId,
    type: row.type,
    run: row.runId,
    endpoint: {
      id: row.endpointId,
      url:
        labels.get(row.url) ??
        (row.url.startsWith(WEBHOOK_ENDPOINT_PREFIX) ? row.url : endpointLabel(row.url)),
      disabled: row.disabledAt !== null,
      disabled_reason: row.disabledReason,
    },
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? row.nextAttemptAt : null,
    created_at: row.createdAt,
    finished_at: row.finishedAt,
    last_attempt: row.lastAttempt ? attemptView(row.lastAttempt) : null,
  };
}

function attemptView(row: WebhookAttemptRow): AttemptView {
  return {
    at: row.at,
    duration_ms: row.durationMs,
    http_status: row.httpStatus,
    ok: row.ok,
    error: row.error === null ? null : { code: row.errorCode, message: row.error },
    response_excerpt: row.responseExcerpt,
  };
}
