import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { AttemptOutcome, Claim } from './delivery-store.js';
import { endpointLabel } from './mask-url.js';
import { retryDelayMs } from '../outbox/retry-delay.js';
import { sendAttempt, type AttemptResult } from './send-attempt.js';
import type { DeliverySettings } from './settings.js';
import { createSigner, type Signer } from './sign.js';

/**
 * A lease outlives the attempt's own deadline by this much (the time to record its outcome), so
 * another process takes over a delivery only when its holder is certainly gone.
 */
const LEASE_MARGIN_MS = 2_000;
/**
 * How often a store that cannot be told of commits (SQLite: PRAGMA data_version, a counter of the
 * connection, no table read) is asked; PostgreSQL tells the worker by NOTIFY instead.
 */
export const POLL_MS = 50;
/**
 * The worker wakes on commits and at its own due times; this slow look is the safety net for a
 * write no one announced (a notification lost with its connection between two LISTENs, say).
 */
export const SAFETY_POLL_MS = 10_000;
/** After a failed claim (the database away), the next try. */
const CLAIM_RETRY_MS = 1_000;

export interface DeliveryWorkerDeps {
  store: Store;
  logger: Logger;
  settings: DeliverySettings;
  /** Called after every attempt (metrics). */
  onAttempt?: (result: AttemptResult) => void;
  random?: () => number;
}

/**
 * Sends the outbox: per endpoint one delivery at a time, oldest first; endpoints in parallel.
 * Everything it knows is in the store, so any process can run one and a killed one loses nothing:
 * its leases expire and the next worker sends the same messages under the same webhook-id.
 */
export class DeliveryWorker {
  readonly #deps: DeliveryWorkerDeps;
  readonly #log: Logger;
  readonly #agent: Agent;
  readonly #signer: Signer | null;
  readonly #token = randomUUID();
  /** The configured URL of each endpoint key: the database keeps the key, the URL stays in the settings. */
  readonly #urlOf: Map<string, string>;
  readonly #busy = new Map<number, Promise<void>>();
  #timer: NodeJS.Timeout | null = null;
  #wakeTimer: NodeJS.Timeout | null = null;
  #wakeTimerAt: number | null = null;
  #unwatch: (() => void) | null = null;
  #nextWakeAt: number | null = 0;
  #ticking = false;
  #again = false;
  #stopped = false;
  #claimUntil = Number.POSITIVE_INFINITY;
  #lastClaimErrorAt = Number.NEGATIVE_INFINITY;
  /** Aborts attempts in flight at stop(): a shutdown must not wait for a slow receiver. */
  readonly #shutdown = new AbortController();
  #idleWaiters: (() => void)[] = [];

  constructor(deps: DeliveryWorkerDeps) {
    this.#deps = deps;
    this.#urlOf = new Map(deps.settings.urls.map((url) => [deps.store.endpointKeys.webhook(url), url]));
    this.#log = deps.logger.child({ module: 'webhooks' });
    const timeout = deps.settings.timeoutMs;
    // No redirect interceptor: a 3xx is an answer, logged as a failed attempt.
    this.#agent = new Agent({ connect: { timeout }, headersTimeout: timeout, bodyTimeout: timeout });
    this.#signer = createSigner(deps.settings.secret);
  }

  /**
   * Watches the database for due deliveries until stop(): woken by every commit the store announces
   * (any process, any instance), by its own next due time, and by a slow safety poll.
   */
  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setInterval(() => this.nudge(), SAFETY_POLL_MS);
    this.#timer.unref();
    // watchCommits calls once at once: the first look.
    this.#unwatch = this.#deps.store.watchCommits(() => this.nudge(), {
      pollMs: POLL_MS,
      onError: (error) => this.#claimFailed(error, 'cannot watch the outbox for commits; retrying'),
    });
  }

  /** Looks for due deliveries now (after a commit made on this very connection, say). */
  nudge(): void {
    if (this.#stopped) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#ticking = true;
    setImmediate(() => void this.#tick());
  }

  /**
   * Sends what is due now and what becomes due within `budgetMs`, then returns; no attempt starts
   * past the budget, and those in flight then finish within their own deadline, so the wait is at
   * most budget + WEBHOOK_TIMEOUT. Returns the deliveries still pending.
   */
  async drain(budgetMs: number): Promise<number> {
    const until = Date.now() + budgetMs;
    // No attempt starts past the budget: a long queue to one endpoint cannot hold the caller.
    this.#claimUntil = until;
    try {
      for (;;) {
        this.nudge();
        await this.#whenIdle();
        const wake = this.#nextWakeAt;
        if (wake === null || wake > until || Date.now() >= until || this.#stopped) break;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, wake - Date.now())));
      }
    } finally {
      this.#claimUntil = Number.POSITIVE_INFINITY;
    }
    return this.pendingCount();
  }

  /** Deliveries still to send to the endpoints this worker serves. */
  pendingCount(): Promise<number> {
    return this.#deps.store.pendingDeliveries([...this.#urlOf.keys()]);
  }

  /**
   * Stops claiming and aborts the attempts in flight; their deliveries stay pending, released for
   * the next worker (a receiver that got one anyway sees it again, under the same webhook-id).
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#shutdown.abort();
    this.#unwatch?.();
    this.#unwatch = null;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#wakeTimer) clearTimeout(this.#wakeTimer);
    this.#timer = null;
    await Promise.all(this.#busy.values());
    await this.#agent.close();
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  async #tick(): Promise<void> {
    try {
      if (this.#stopped || Date.now() >= this.#claimUntil) return;
      const { claims, nextWakeAt } = await this.#deps.store.claimDue({
        urls: [...this.#urlOf.keys()],
        busyEndpoints: new Set(this.#busy.keys()),
        leaseMs: this.#deps.settings.timeoutMs + LEASE_MARGIN_MS,
        token: this.#token,
        now: Date.now(),
      });
      this.#nextWakeAt = nextWakeAt;
      this.#wakeSoon(nextWakeAt);
      for (const claim of claims) {
        const attempt = this.#attempt(claim).finally(() => {
          this.#busy.delete(claim.endpointId);
          this.nudge();
        });
        this.#busy.set(claim.endpointId, attempt);
      }
    } catch (error) {
      // A busy or failing database: nothing is lost, the rows stay pending; look again shortly.
      this.#claimFailed(error, 'cannot claim webhook deliveries; retrying');
      this.#nextWakeAt = Date.now() + CLAIM_RETRY_MS;
      this.#wakeSoon(this.#nextWakeAt);
    } finally {
      this.#ticking = false;
      if (this.#again) {
        this.#again = false;
        this.nudge();
      } else if (this.#busy.size === 0) {
        for (const resolve of this.#idleWaiters.splice(0)) resolve();
      }
    }
  }

  /** One line a minute at most: a database away fails every look until it is back. */
  #claimFailed(error: unknown, message: string): void {
    if (Date.now() - this.#lastClaimErrorAt < 60_000) return;
    this.#lastClaimErrorAt = Date.now();
    this.#log.error({ err: error }, message);
  }

  /**
   * The next due time (a retry, a lease ending) gets a timer of its own, kept to the ms: nothing
   * else would wake the worker then. An earlier timer already set stands.
   */
  #wakeSoon(at: number | null): void {
    if (at === null || this.#timer === null) return;
    if (this.#wakeTimer !== null && this.#wakeTimerAt !== null && this.#wakeTimerAt <= at) return;
    if (this.#wakeTimer) clearTimeout(this.#wakeTimer);
    this.#wakeTimerAt = at;
    // setTimeout holds 2^31 - 1 ms at most; a later time is reached by waking on the way.
    const delay = Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1);
    this.#wakeTimer = setTimeout(() => {
      this.#wakeTimer = null;
      this.#wakeTimerAt = null;
      this.nudge();
    }, delay);
    this.#wakeTimer.unref();
  }

  #whenIdle(): Promise<void> {
    if (!this.#ticking && this.#busy.size === 0 && !this.#again) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async #attempt(claim: Claim): Promise<void> {
    const { settings } = this.#deps;
    const result = await sendAttempt(
      this.#agent,
      { url: this.#urlOf.get(claim.url) ?? claim.url, webhookId: claim.webhookId, body: claim.body },
      { timeoutMs: settings.timeoutMs, signer: this.#signer, signal: this.#shutdown.signal },
    );
    if (this.#shutdown.signal.aborted) {
      await this.#release(claim);
      return;
    }
    const outcome = this.#outcome(claim, result);
    try {
      await this.#deps.store.recordAttempt(claim, result, outcome);
    } catch (error) {
      // Unrecorded, the delivery stays pending under our lease: it is sent again once the lease ends.
      this.#log.error({ err: error, deliveryId: claim.deliveryId }, 'cannot record a webhook attempt');
      return;
    }
    this.#deps.onAttempt?.(result);
    this.#report(claim, result, outcome);
  }

  /** Our shutdown is no verdict on the receiver: no attempt is logged, the lease is handed back. */
  async #release(claim: Claim): Promise<void> {
    try {
      await this.#deps.store.releaseLease(claim, this.#token);
      this.#log.info(
        {
          deliveryId: claim.deliveryId,
          webhookId: claim.webhookId,
          endpoint: endpointLabel(this.#urlOf.get(claim.url) ?? claim.url),
        },
        'webhook attempt abandoned at shutdown; the delivery stays pending',
      );
    } catch (error) {
      this.#log.error(
        { err: error, deliveryId: claim.deliveryId },
        'cannot release a webhook lease; it expires',
      );
    }
  }

  #outcome(claim: Claim, result: AttemptResult): AttemptOutcome {
    if (result.ok) return { kind: 'succeeded' };
    if (result.httpStatus === 410) return { kind: 'gone' };
    const delay = retryDelayMs(this.#deps.settings.retryScheduleMs, claim.tries + 1, this.#deps.random);
    if (delay === null) return { kind: 'failed' };
    return { kind: 'retry', nextAttemptAt: new Date(Date.now() + delay).toISOString() };
  }

  #report(claim: Claim, result: AttemptResult, outcome: AttemptOutcome): void {
    const fields = {
      deliveryId: claim.deliveryId,
      webhookId: claim.webhookId,
      endpoint: endpointLabel(this.#urlOf.get(claim.url) ?? claim.url),
      httpStatus: result.httpStatus,
      durationMs: result.durationMs,
      ...(result.errorCode ? { errorCode: result.errorCode, error: result.error } : {}),
    };
    switch (outcome.kind) {
      case 'succeeded':
        this.#log.info(fields, 'webhook delivered');
        break;
      case 'gone':
        this.#log.warn(fields, 'webhook endpoint answered 410 Gone: disabled until re-enabled');
        break;
      case 'retry':
        this.#log.warn(
          { ...fields, nextAttemptAt: outcome.nextAttemptAt },
          'webhook attempt failed; will retry',
        );
        break;
      case 'failed':
        this.#log.error(fields, 'webhook delivery failed after its last retry');
        break;
    }
  }
}
