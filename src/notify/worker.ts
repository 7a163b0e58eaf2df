import type { Logger } from 'pino';
import type { Config } from '../config/load-config.js';
import { sendMessage } from './send.js';
import { deliverDue, type DeliverDeps, type NotificationOutbox } from './outbox.js';
import { digestSettings, writeDueDigest, type DigestSettings } from './digest-outbox.js';

export interface NotifyWorkerDeps extends DeliverDeps {
  logger: Logger;
  /** How often due rows are looked for. */
  pollMs: number;
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
  #pass: Promise<void> = Promise.resolve();
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
    void this.poke();
  }

  /** Runs one pass after the one in flight; resolves when it is done. */
  poke(): Promise<void> {
    this.#pass = this.#pass.then(() => this.#drain());
    return this.#pass;
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

/** How often `start` looks for due notifications: a run's message goes out within this. */
export const NOTIFY_POLL_MS = 5000;

/** The worker `start` runs, or null when NOTIFY_URLS names no target. */
export function startNotifyWorker(
  config: Pick<Config, 'notify' | 'server'>,
  outbox: NotificationOutbox,
  logger: Logger,
): NotifyWorker | null {
  const targets = config.notify.urls ?? [];
  if (targets.length === 0) return null;
  const worker = new NotifyWorker({
    outbox,
    targets,
    send: sendMessage,
    timeoutMs: config.notify.timeoutMs,
    logger: logger.child({ module: 'notify' }),
    pollMs: NOTIFY_POLL_MS,
    digest: digestSettings(config, Intl.DateTimeFormat().resolvedOptions().timeZone),
  });
  worker.start();
  return worker;
}
