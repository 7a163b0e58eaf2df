import type { Logger } from 'pino';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { sendMessage } from './send.js';
import { deliverDue, type DeliverDeps, type NotificationOutbox } from './outbox.js';
import { digestSettings, writeDueDigest, type DigestSettings } from './digest-outbox.js';
import { keyedTargets } from './targets.js';

export interface NotifyWorkerDeps extends DeliverDeps {
  logger: Logger;
  /** How often due rows are looked for (retries coming due); commits wake the worker too. */
  pollMs: number;
  /**
   * The store's commit watch (Store['watchCommits']): a pass follows every commit of any process
   * or instance, so a run's messages go out at once rather than at the next poll.
   */
  watchCommits?: (onCommit: () => void) => () => void;
  /** Hourly or daily digests: each pass first writes the one due, if not written yet. */
  digest?: DigestSettings | null;
}

/**
 * Delivers the notification rows runs wrote, at least once: a pass every `pollMs`, one pass at a
 * time; stop() waits for the pass in flight, so a shutdown never leaves a row half recorded.
 */
export class NotifyWorker {
  readonly #deps: NotifyWorkerDeps;
  #timer: NodeJS.Timeout | null = null;
  #unwatch: (() => void) | null = null;
  #pass: Promise<void> = Promise.resolve();
  /** A pass is queued and not begun: further pokes join it rather than queue more. */
  #queued: Promise<void> | null = null;
  #stopped = false;

  constructor(deps: NotifyWorkerDeps) {
    const { outbox, logger } = deps;
    // A permanent refusal is a person's to fix (a revoked webhook): say so once, where it happens.
    const disableTarget = async (targetId: string, reason: string) => {
      await outbox.disableTarget(targetId, reason);
      logger.warn({ target: targetId, reason }, 'notification target refused for good: disabled');
    };
    // Once stopped, the rest of a pass is not sent: its rows keep their lease until stop() hands
    // them back, so a shutdown waits for one send at most.
    const send: DeliverDeps['send'] = (message, target, options) =>
      this.#stopped ? Promise.reject(new StoppedError()) : deps.send(message, target, options);
    this.#deps = { ...deps, send, outbox: { ...bind(outbox), disableTarget } };
  }

  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setInterval(() => void this.poke(), this.#deps.pollMs);
    this.#timer.unref();
    this.#unwatch = this.#deps.watchCommits?.(() => void this.poke()) ?? null;
    void this.poke();
  }

  /** Runs one pass after the one in flight; resolves when it is done. */
  poke(): Promise<void> {
    if (this.#queued) return this.#queued;
    const queued = this.#pass.then(() => {
      this.#queued = null;
      return this.#drain();
    });
    this.#queued = queued;
    this.#pass = queued;
    return queued;
  }

  async #drain(): Promise<void> {
    if (this.#stopped) return;
    try {
      const { digest, outbox, now } = this.#deps;
      if (digest) await writeDueDigest(outbox, digest, now?.() ?? new Date());
      while (!this.#stopped && (await deliverDue(this.#deps)) > 0);
    } catch (error) {
      if (error instanceof StoppedError) return;
      this.#deps.logger.error({ err: error }, 'cannot deliver notifications; retrying at the next poll');
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unwatch?.();
    this.#unwatch = null;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#pass;
    await this.#deps.outbox.release?.();
  }
}

class StoppedError extends Error {}

/** The outbox's operations as plain functions (a class instance's methods do not spread). */
function bind(outbox: NotificationOutbox): NotificationOutbox {
  return {
    enqueue: (runId, rows) => outbox.enqueue(runId, rows),
    claim: (now, limit) => outbox.claim(now, limit),
    complete: (id, result) => outbox.complete(id, result),
    disableTarget: (targetId, reason) => outbox.disableTarget(targetId, reason),
    release: () => outbox.release?.() ?? Promise.resolve(),
    countPending: () => outbox.countPending?.() ?? Promise.resolve(0),
    enqueueDigest: (plan) => outbox.enqueueDigest?.(plan) ?? Promise.resolve(0),
  };
}

/** How often `start` looks for due notifications besides each commit: retries go out within this. */
export const NOTIFY_POLL_MS = 5000;

/** How often a store that cannot be told of commits (SQLite's data_version) is asked for them. */
const NOTIFY_WATCH_POLL_MS = 250;

/** The worker `start` runs, or null when NOTIFY_URLS names no target. */
export function startNotifyWorker(
  config: Pick<Config, 'notify' | 'server'>,
  outbox: NotificationOutbox,
  logger: Logger,
  store: Pick<Store, 'watchCommits' | 'endpointKeys'>,
): NotifyWorker | null {
  const targets = keyedTargets(config.notify.urls, store.endpointKeys);
  if (targets.length === 0) return null;
  const log = logger.child({ module: 'notify' });
  const watchCommits = (onCommit: () => void) =>
    store.watchCommits(onCommit, {
      pollMs: NOTIFY_WATCH_POLL_MS,
      onError: (err) => log.warn({ err }, 'cannot watch for commits; polling meanwhile'),
    });
  const worker = new NotifyWorker({
    outbox,
    targets,
    send: sendMessage,
    timeoutMs: config.notify.timeoutMs,
    logger: log,
    pollMs: NOTIFY_POLL_MS,
    watchCommits,
    digest: digestSettings(config, store.endpointKeys, Intl.DateTimeFormat().resolvedOptions().timeZone),
  });
  worker.start();
  return worker;
}
