import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { OutboxChannel, OutboxItem, RowOutcome, SentRow } from './channel.js';
import { outcomeOf } from './outcome.js';

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
/** Rows queued or in flight at most: a backlog is claimed as lanes free up, not all at once. */
export const MAX_IN_FLIGHT = 32;

export interface OutboxWorkerDeps {
  /** Each channel's rows, sender and records: the worker's loop serves them all. */
  channels: readonly OutboxChannel[];
  logger: Logger;
  /** The store whose commits wake the worker once started; none: it looks when poked and polled. */
  store?: Pick<Store, 'watchCommits'>;
  now?: () => Date;
  random?: () => number;
  /** Waits between two sends of one lane (a timer by default; tests record it). */
  sleep?: (ms: number) => Promise<void>;
}

interface Lane {
  channel: OutboxChannel;
  queue: OutboxItem[];
  /** When this lane's last send started: the pace of its backlog. */
  lastSentAt: number | null;
  done: Promise<void>;
}

const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Delivers the outbox, every channel of it, at least once: woken by every commit the store
 * announces, by its own next due time and by a slow poll; one pass at a time claims what is due
 * through each channel and queues each row in its lane (an endpoint, a target): one send at a time
 * per lane, oldest first, lanes in parallel. Everything it knows is in the store, so any process
 * can run one and a killed one loses nothing: its leases expire and the rows are sent again.
 */
export class OutboxWorker {
  readonly #deps: OutboxWorkerDeps;
  readonly #log: Logger;
  readonly #lanes = new Map<string, Lane>();
  #queued = 0;
  #timer: NodeJS.Timeout | null = null;
  #wakeTimer: NodeJS.Timeout | null = null;
  #wakeTimerAt: number | null = null;
  #unwatch: (() => void) | null = null;
  #nextWakeAt: number | null = 0;
  #ticking = false;
  #again = false;
  #pass: Promise<void> = Promise.resolve();
  #stopped = false;
  #stopping: Promise<void> | null = null;
  #claimUntil = Number.POSITIVE_INFINITY;
  #lastClaimErrorAt = Number.NEGATIVE_INFINITY;
  /** Aborts sends in flight at stop(): a shutdown must not wait for a slow receiver. */
  readonly #shutdown = new AbortController();
  #idleWaiters: (() => void)[] = [];

  constructor(deps: OutboxWorkerDeps) {
    this.#deps = deps;
    this.#log = deps.logger;
  }

  /**
   * Watches the store for due rows until stop(): woken by every commit it announces (any process,
   * any instance), by the next due time a claim told, and by the channels' slow poll.
   */
  start(): void {
    if (this.#timer || this.#stopped) return;
    const pollMs = Math.min(SAFETY_POLL_MS, ...this.#deps.channels.map((c) => c.pollMs));
    this.#timer = setInterval(() => this.nudge(), pollMs);
    this.#timer.unref();
    const { store } = this.#deps;
    if (!store) {
      this.nudge();
      return;
    }
    // watchCommits calls once at once: the first look.
    this.#unwatch = store.watchCommits(() => this.nudge(), {
      pollMs: POLL_MS,
      onError: (error) => this.#claimFailed(error, 'cannot watch the outbox for commits; retrying'),
    });
  }

  /** Looks for due rows now (after a commit made on this very connection, say). */
  nudge(): void {
    if (this.#stopped) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#ticking = true;
    this.#pass = new Promise((resolve) => setImmediate(() => void this.#tick().then(resolve)));
  }

  /** Looks now and resolves once nothing due is left to send (or the worker stopped). */
  poke(): Promise<void> {
    this.nudge();
    return this.#whenIdle();
  }

  /**
   * Sends what is due now and what becomes due within `budgetMs`, then returns; no claim is made
   * past the budget, and the sends in flight then finish within their own deadline. Returns the
   * rows still pending.
   */
  async drain(budgetMs: number): Promise<number> {
    const until = Date.now() + budgetMs;
    this.#claimUntil = until;
    try {
      for (;;) {
        await this.poke();
        const wake = this.#nextWakeAt;
        if (wake === null || wake > until || Date.now() >= until || this.#stopped) break;
        await timer(Math.max(0, wake - Date.now()));
      }
    } finally {
      this.#claimUntil = Number.POSITIVE_INFINITY;
    }
    return this.pendingCount();
  }

  /** Rows still to send, of every channel. */
  async pendingCount(): Promise<number> {
    const counts = await Promise.all(this.#deps.channels.map((channel) => channel.pending()));
    return counts.reduce((sum, count) => sum + count, 0);
  }

  /**
   * Stops claiming and aborts the sends in flight; the rows not sent stay pending, their leases
   * handed back for the next worker (a receiver that got one anyway sees it again, same id). A
   * second call waits for the same stop (a deadline's timer and the caller's cleanup may race).
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    this.#stopped = true;
    this.#shutdown.abort();
    this.#unwatch?.();
    this.#unwatch = null;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#wakeTimer) clearTimeout(this.#wakeTimer);
    this.#timer = null;
    await this.#pass;
    await Promise.all([...this.#lanes.values()].map((lane) => lane.done));
    await Promise.all(this.#deps.channels.map((channel) => this.#close(channel)));
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  async #close(channel: OutboxChannel): Promise<void> {
    try {
      await channel.close();
    } catch (error) {
      this.#log.error({ err: error, channel: channel.noun }, 'cannot hand back leases; they expire');
    }
  }

  #now(): Date {
    return this.#deps.now?.() ?? new Date();
  }

  async #tick(): Promise<void> {
    try {
      if (this.#stopped || Date.now() >= this.#claimUntil) return;
      let next: number | null = null;
      for (const channel of this.#deps.channels) {
        const wake = await this.#claim(channel);
        if (wake !== null) next = next === null ? wake : Math.min(next, wake);
      }
      this.#nextWakeAt = next;
      this.#wakeSoon(next);
    } finally {
      this.#ticking = false;
      if (this.#again) {
        this.#again = false;
        this.nudge();
      } else this.#idleIfSo();
    }
  }

  /** One channel's part of a pass: its step, its claim, its rows queued. Answers its next due time. */
  async #claim(channel: OutboxChannel): Promise<number | null> {
    try {
      await channel.beforeClaim?.(this.#now());
      const room = MAX_IN_FLIGHT - this.#queued;
      // Lanes finishing look again: what is left waits for them.
      if (room <= 0 || this.#stopped) return null;
      const busyLanes = new Set(
        [...this.#lanes.entries()].filter(([, lane]) => lane.channel === channel).map(([key]) => laneOf(key)),
      );
      const { items, nextWakeAt } = await channel.claim({ now: this.#now(), busyLanes, room });
      for (const item of items) this.#enqueue(channel, item);
      return nextWakeAt;
    } catch (error) {
      // A busy or failing database: nothing is lost, the rows stay pending; look again shortly.
      this.#claimFailed(error, `cannot claim ${channel.noun} rows; retrying`);
      return Date.now() + CLAIM_RETRY_MS;
    }
  }

  #enqueue(channel: OutboxChannel, item: OutboxItem): void {
    this.#queued++;
    const key = `${channel.noun}\u0000${item.lane}`;
    const running = this.#lanes.get(key);
    if (running) {
      running.queue.push(item);
      return;
    }
    const lane: Lane = { channel, queue: [item], lastSentAt: null, done: Promise.resolve() };
    this.#lanes.set(key, lane);
    lane.done = this.#run(key, lane).finally(() => {
      this.nudge();
      this.#idleIfSo();
    });
  }

  /** One lane's queue, a row at a time; the lane ends (synchronously with its last shift) when empty. */
  async #run(key: string, lane: Lane): Promise<void> {
    for (;;) {
      const item = lane.queue.shift();
      if (item === undefined) {
        this.#lanes.delete(key);
        return;
      }
      try {
        if (!this.#stopped) await this.#pace(lane, item);
        if (this.#stopped) await this.#release(lane.channel, item);
        else await this.#deliver(lane.channel, item);
      } finally {
        this.#queued--;
      }
    }
  }

  async #pace(lane: Lane, item: OutboxItem): Promise<void> {
    if (lane.lastSentAt !== null) {
      const wait = lane.lastSentAt + item.paceMs - this.#now().getTime();
      if (wait > 0) await (this.#deps.sleep ?? timer)(wait);
    }
    lane.lastSentAt = this.#now().getTime();
  }

  async #deliver(channel: OutboxChannel, item: OutboxItem): Promise<void> {
    let sent: SentRow | null;
    try {
      sent = await item.send(this.#shutdown.signal);
    } catch (error) {
      this.#logOf(channel).error(
        { err: error, ...item.fields },
        `cannot send a ${channel.noun}; it is sent again`,
      );
      await this.#release(channel, item);
      return;
    }
    if (sent === null) {
      await this.#release(channel, item, `${channel.noun} attempt abandoned at shutdown; it stays pending`);
      return;
    }
    const outcome = outcomeOf(sent.verdict, item.tries, {
      retryScheduleMs: channel.retryScheduleMs,
      now: this.#now(),
      ...(this.#deps.random ? { random: this.#deps.random } : {}),
    });
    try {
      await sent.record(outcome);
    } catch (error) {
      // Unrecorded, the row stays pending under our lease: it is sent again once the lease ends.
      this.#logOf(channel).error({ err: error, ...item.fields }, `cannot record a ${channel.noun} attempt`);
      return;
    }
    this.#report(channel, { ...item.fields, ...sent.fields }, outcome);
  }

  /** Our shutdown is no verdict on the receiver: no attempt is logged, the lease is handed back. */
  async #release(channel: OutboxChannel, item: OutboxItem, message?: string): Promise<void> {
    try {
      await item.release();
      if (message) this.#logOf(channel).info(item.fields, message);
    } catch (error) {
      this.#logOf(channel).error(
        { err: error, ...item.fields },
        `cannot release a ${channel.noun} lease; it expires`,
      );
    }
  }

  #report(channel: OutboxChannel, fields: Record<string, unknown>, outcome: RowOutcome): void {
    const { noun } = channel;
    const log = this.#logOf(channel);
    switch (outcome.kind) {
      case 'delivered':
        log.info(fields, `${noun} delivered`);
        break;
      case 'refused':
        // A permanent refusal is a person's to fix (a revoked webhook): said once, where it happens.
        log.warn(
          { ...fields, reason: outcome.reason },
          `${noun} target refused for good: disabled until re-enabled`,
        );
        break;
      case 'retry':
        log.warn(
          { ...fields, nextAttemptAt: outcome.nextAttemptAt.toISOString() },
          `${noun} attempt failed; will retry`,
        );
        break;
      case 'failed':
        log.error(
          fields,
          outcome.retriesSpent
            ? `${noun} delivery failed after its last retry`
            : `${noun} refused; not retried`,
        );
        break;
    }
  }

  #logOf(channel: OutboxChannel): Logger {
    return channel.log ?? this.#log;
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

  #idleIfSo(): void {
    if (this.#ticking || this.#again || this.#lanes.size > 0) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  #whenIdle(): Promise<void> {
    if (this.#stopped || (!this.#ticking && this.#lanes.size === 0 && !this.#again)) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
}

/** The channel's own lane of a worker's lane key. */
const laneOf = (key: string): string => key.slice(key.indexOf('\u0000') + 1);
