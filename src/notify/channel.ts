import type { Logger } from 'pino';
import { silentLogger } from '../logger.js';
import type { Config } from '../config/load-config.js';
import { defaultOf } from '../config/settings.js';
import type { Store } from '../db/store.js';
import type { OutboxChannel, OutboxItem, RowOutcome, SentRow, SendVerdict } from '../outbox/channel.js';
import { OutboxWorker } from '../outbox/worker.js';
import { digestSettings, writeDueDigest, type DigestSettings } from './digest-outbox.js';
import type { NotifyMessage } from './message.js';
import type { NotificationOutbox, NotificationResult, OutboxNotification } from './outbox.js';
import { sendMessage, type SendOptions, type SendOutcome } from './send.js';
import { keyedTargets, type KeyedTarget, type NotifyKind, type NotifyTarget } from './targets.js';

/** How often `start` looks for due notifications besides each commit: retries go out within this. */
export const NOTIFY_POLL_MS = 5000;

/** Rows one claim leases at most. */
const CLAIM_LIMIT = 10;

export interface DeliverDeps {
  outbox: NotificationOutbox;
  /** The configured targets with their ids in the store; a row whose target is no longer configured fails. */
  targets: readonly KeyedTarget[];
  send: (message: NotifyMessage, target: NotifyTarget, options: SendOptions) => Promise<SendOutcome>;
  timeoutMs: number;
  /** Delays before each retry; the webhooks' schedule by default. */
  retryScheduleMs?: readonly number[];
  now?: () => Date;
  random?: () => number;
  /** Waits between two sends to one target (a timer by default; tests record it). */
  sleep?: (ms: number) => Promise<void>;
}

export interface NotifyChannelDeps extends DeliverDeps {
  /** How often due rows are looked for (retries coming due); commits wake the worker too. */
  pollMs?: number;
  /** Hourly or daily digests: each pass first writes the one due, if not written yet. */
  digest?: DigestSettings | null;
  /** Rows one claim leases at most. */
  limit?: number;
  /** Told the rows each claim queued (the one-pass delivery counts them). */
  onClaim?: (count: number) => void;
}

/**
 * The least time between two messages to one target, from each service's documented webhook
 * limits: Slack one a second, Discord five per two seconds, Google Chat one write a second per
 * space; the others answer 429 with Retry-After when pressed, which the retry honours.
 */
export const PACE_MS: Record<NotifyKind, number> = {
  slack: 1000,
  discord: 400,
  gchat: 1000,
  teams: 250,
  mattermost: 0,
  ntfy: 0,
  email: 0,
};

/**
 * The notifications' part of the outbox worker: rows of enabled targets, oldest first, each sent
 * in its service's format (chat JSON, mail), one target's backlog paced by the service's limit.
 */
export function notifyChannel(deps: NotifyChannelDeps): OutboxChannel {
  const byId = new Map(deps.targets.map((t) => [t.id, t]));
  // The rows this channel handed to the worker and not yet recorded: a claim of an outbox that
  // does not lease (or whose lease ended) never queues one twice.
  const held = new Set<number>();
  const limit = deps.limit ?? CLAIM_LIMIT;
  const { digest, outbox } = deps;
  return {
    noun: 'notification',
    retryScheduleMs: deps.retryScheduleMs ?? defaultOf('webhooks', 'retryScheduleMs'),
    pollMs: deps.pollMs ?? NOTIFY_POLL_MS,
    ...(digest ? { beforeClaim: async (now: Date) => void (await writeDueDigest(outbox, digest, now)) } : {}),
    async claim({ now, room }) {
      const rows = (await outbox.claim(now, Math.min(limit, room))).filter((row) => !held.has(row.id));
      for (const row of rows) held.add(row.id);
      deps.onClaim?.(rows.length);
      const items = rows.map((row) => itemOf(deps, row, byId.get(row.targetId), () => held.delete(row.id)));
      return { items, nextWakeAt: null };
    },
    pending: () => outbox.countPending?.() ?? Promise.resolve(0),
    close: () => outbox.release?.() ?? Promise.resolve(),
  };
}

function itemOf(
  deps: DeliverDeps,
  row: OutboxNotification,
  target: KeyedTarget | undefined,
  done: () => void,
): OutboxItem {
  return {
    lane: row.targetId,
    paceMs: target ? PACE_MS[target.kind] : 0,
    tries: row.attempts,
    fields: { notificationId: row.id, target: row.targetId },
    send: async () => {
      if (target === undefined) {
        return sentOf(deps, row, { kind: 'failed' }, 'the target is no longer in NOTIFY_URLS', done);
      }
      const outcome = await deps.send(row.message, target, { timeoutMs: deps.timeoutMs });
      const sent = sentOf(deps, row, verdictOf(outcome), outcome.detail, done);
      return {
        ...sent,
        fields: { ...sent.fields, httpStatus: outcome.httpStatus, durationMs: outcome.durationMs },
      };
    },
    release: () => {
      done();
      return Promise.resolve();
    },
  };
}

function verdictOf(outcome: SendOutcome): SendVerdict {
  switch (outcome.status) {
    case 'ok':
      return { kind: 'delivered' };
    case 'refused':
      return { kind: 'refused', reason: outcome.detail };
    case 'failed':
      return { kind: 'failed' };
    case 'retry':
      return { kind: 'retry', retryAfterMs: outcome.retryAfterMs };
  }
}

function sentOf(
  deps: DeliverDeps,
  row: OutboxNotification,
  verdict: SendVerdict,
  detail: string,
  done: () => void,
): SentRow {
  return {
    verdict,
    fields: { detail },
    record: async (outcome) => {
      try {
        if (outcome.kind === 'refused') await deps.outbox.disableTarget(row.targetId, outcome.reason);
        await deps.outbox.complete(row.id, resultOf(outcome, detail));
      } finally {
        done();
      }
    },
  };
}

/** The worker's outcome as the notification row keeps it. */
function resultOf(outcome: RowOutcome, detail: string): NotificationResult {
  switch (outcome.kind) {
    case 'delivered':
      return { status: 'delivered', detail };
    case 'refused':
      return { status: 'target_disabled', detail };
    case 'retry':
      return { status: 'pending', nextAttemptAt: outcome.nextAttemptAt, detail };
    case 'failed':
      return { status: 'failed', detail: outcome.retriesSpent ? `${detail}; retries spent` : detail };
  }
}

export interface NotifyWorkerDeps extends NotifyChannelDeps {
  logger: Logger;
  /** The store's commit watch (Store['watchCommits']): once started, every commit wakes the worker. */
  watchCommits?: (onCommit: () => void) => () => void;
}

/** The outbox worker over the notification channel alone (a sync's delivery, tests). */
export function notifyWorker(deps: NotifyWorkerDeps): OutboxWorker {
  return new OutboxWorker({
    channels: [notifyChannel(deps)],
    logger: deps.logger,
    ...(deps.watchCommits ? { store: { watchCommits: deps.watchCommits } } : {}),
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.random ? { random: deps.random } : {}),
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
  });
}

/** The notification channel `start` runs, or null when NOTIFY_URLS names no target. */
export function startNotifyChannel(
  config: Pick<Config, 'notify' | 'server'>,
  outbox: NotificationOutbox,
  store: Pick<Store, 'endpointKeys'>,
): OutboxChannel | null {
  const targets = keyedTargets(config.notify.urls, store.endpointKeys);
  if (targets.length === 0) return null;
  return notifyChannel({
    outbox,
    targets,
    send: sendMessage,
    timeoutMs: config.notify.timeoutMs,
    digest: digestSettings(config, store.endpointKeys, Intl.DateTimeFormat().resolvedOptions().timeZone),
  });
}

/**
 * Sends what is due, through the outbox worker over the notification channel alone, until nothing
 * due is left; answers the rows claimed.
 */
export async function deliverDue(deps: DeliverDeps, limit = 10): Promise<number> {
  let claimed = 0;
  const worker = notifyWorker({
    ...deps,
    limit,
    logger: silentLogger(),
    onClaim: (count) => {
      claimed += count;
    },
  });
  try {
    await worker.poke();
  } finally {
    await worker.stop();
  }
  return claimed;
}
