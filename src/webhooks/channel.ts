import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import type { AttemptOutcome, Claim } from './delivery-store.js';
import type { Store } from '../db/store.js';
import type { OutboxChannel, OutboxItem, RowOutcome, SentRow } from '../outbox/channel.js';
import { endpointLabel } from './mask-url.js';
import { sendAttempt, type AttemptResult } from './send-attempt.js';
import type { DeliverySettings } from './settings.js';
import { createSigner, type Signer } from './sign.js';
import { SAFETY_POLL_MS } from '../outbox/worker.js';

/**
 * A lease outlives the attempt's own deadline by this much (the time to record its outcome), so
 * another process takes over a delivery only when its holder is certainly gone.
 */
const LEASE_MARGIN_MS = 2_000;

/** Why an endpoint a 410 Gone answered is disabled (the delivery log says the same). */
const GONE_REASON = 'answered 410 Gone';

export interface WebhookChannelDeps {
  store: Store;
  settings: DeliverySettings;
  /** Called after every attempt (metrics). */
  onAttempt?: (result: AttemptResult) => void;
}

/**
 * The webhooks' part of the outbox worker: per endpoint one delivery at a time, oldest first (the
 * claim leases each queue's head only), each a POST signed the Standard Webhooks way.
 */
export function webhookChannel(deps: WebhookChannelDeps): OutboxChannel {
  const { store, settings } = deps;
  const token = randomUUID();
  // The configured URL of each endpoint key: the database keeps the key, the URL stays in the settings.
  const urlOf = new Map(settings.urls.map((url) => [store.endpointKeys.webhook(url), url]));
  const timeout = settings.timeoutMs;
  // No redirect interceptor: a 3xx is an answer, logged as a failed attempt.
  const agent = new Agent({ connect: { timeout }, headersTimeout: timeout, bodyTimeout: timeout });
  const wire: Wire = { store, settings, agent, signer: createSigner(settings.secret), token, urlOf, deps };
  return {
    noun: 'webhook',
    retryScheduleMs: settings.retryScheduleMs,
    pollMs: SAFETY_POLL_MS,
    async claim({ now, busyLanes }) {
      const { claims, nextWakeAt } = await store.claimDue({
        urls: [...urlOf.keys()],
        busyEndpoints: new Set([...busyLanes].map(Number)),
        leaseMs: settings.timeoutMs + LEASE_MARGIN_MS,
        token,
        now: now.getTime(),
      });
      return { items: claims.map((claim) => itemOf(wire, claim)), nextWakeAt };
    },
    pending: () => store.pendingDeliveries([...urlOf.keys()]),
    close: () => agent.close(),
  };
}

interface Wire {
  store: Store;
  settings: DeliverySettings;
  agent: Agent;
  signer: Signer | null;
  token: string;
  urlOf: ReadonlyMap<string, string>;
  deps: WebhookChannelDeps;
}

function itemOf(wire: Wire, claim: Claim): OutboxItem {
  const url = wire.urlOf.get(claim.url) ?? claim.url;
  return {
    lane: String(claim.endpointId),
    paceMs: 0,
    tries: claim.tries,
    fields: { deliveryId: claim.deliveryId, webhookId: claim.webhookId, endpoint: endpointLabel(url) },
    send: async (signal) => {
      const result = await sendAttempt(
        wire.agent,
        { url, webhookId: claim.webhookId, body: claim.body },
        { timeoutMs: wire.settings.timeoutMs, signer: wire.signer, signal },
      );
      // Our shutdown is no verdict on the receiver: the lease is handed back, no attempt logged.
      if (signal.aborted) return null;
      return sentOf(wire, claim, result);
    },
    release: () => wire.store.releaseLease(claim, wire.token),
  };
}

function sentOf(wire: Wire, claim: Claim, result: AttemptResult): SentRow {
  return {
    verdict: result.ok
      ? { kind: 'delivered' }
      : result.httpStatus === 410
        ? { kind: 'refused', reason: GONE_REASON }
        : { kind: 'retry', retryAfterMs: result.retryAfterMs },
    fields: {
      httpStatus: result.httpStatus,
      durationMs: result.durationMs,
      ...(result.errorCode ? { errorCode: result.errorCode, error: result.error } : {}),
    },
    record: async (outcome) => {
      await wire.store.recordAttempt(claim, result, attemptOutcome(outcome));
      wire.deps.onAttempt?.(result);
    },
  };
}

/** The worker's outcome as the delivery log's: a refusal of the endpoint is its 410 Gone. */
function attemptOutcome(outcome: RowOutcome): AttemptOutcome {
  switch (outcome.kind) {
    case 'delivered':
      return { kind: 'succeeded' };
    case 'refused':
      return { kind: 'gone' };
    case 'retry':
      return { kind: 'retry', nextAttemptAt: outcome.nextAttemptAt.toISOString() };
    case 'failed':
      return { kind: 'failed' };
  }
}
