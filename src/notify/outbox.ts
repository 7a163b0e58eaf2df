import { defaultOf } from '../config/settings.js';
import { retryDelayMs } from '../outbox/retry-delay.js';
import type { NotificationRows } from '../db/notify-outbox.js';
import type { DigestPlan } from '../db/run-commit.js';
import type { NotifyMessage } from './message.js';
import type { SendOptions, SendOutcome } from './send.js';
import type { KeyedTarget, NotifyEventType, NotifyKind, NotifyTarget } from './targets.js';

/** One message for one target, as the outbox keeps it: the target by its id, never its URL. */
export interface OutboxNotification {
  id: number;
  targetId: string;
  message: NotifyMessage;
  /** Attempts made before this claim. */
  attempts: number;
}

export type NotificationResult =
  | { status: 'delivered'; detail: string }
  | { status: 'pending'; nextAttemptAt: Date; detail: string }
  | { status: 'failed'; detail: string }
  /** The service refused the target for good: the row fails and the target is disabled. */
  | { status: 'target_disabled'; detail: string };

/**
 * What notifications need of the store, until the store layer names these operations: `enqueue`
 * runs inside the run's own transaction (a message exists exactly when its run does); `claim`
 * leases due rows of enabled targets; `complete` records an attempt's result and ends the lease.
 */
export interface NotificationOutbox {
  enqueue(runId: number, rows: readonly { targetId: string; message: NotifyMessage }[]): Promise<void>;
  claim(now: Date, limit: number): Promise<OutboxNotification[]>;
  complete(id: number, result: NotificationResult): Promise<void>;
  disableTarget(targetId: string, reason: string): Promise<void>;
  /** Hands back the leases this outbox holds, so rows a shutdown did not send go out at once later. */
  release?(): Promise<void>;
  /** Rows still to be sent (pending, whatever their due time), for a `sync` to say what it left. */
  countPending?(): Promise<number>;
  /** Writes a period's digest once per target (see DigestPlan); answers the deliveries written. */
  enqueueDigest?(plan: DigestPlan): Promise<number>;
}

/** The worker's outbox over a store's notification rows: each row's message read from its JSON. */
export function outboxOver(rows: NotificationRows): NotificationOutbox {
  const outbox: NotificationOutbox = {
    enqueue: () => rows.enqueue(),
    claim: async (now, limit) =>
      (await rows.claim(now, limit)).map(({ id, targetId, body, attempts }) => ({
        id,
        targetId,
        message: JSON.parse(body) as NotifyMessage,
        attempts,
      })),
    complete: (id, result) => rows.complete(id, result),
    disableTarget: (targetId, reason) => rows.disableTarget(targetId, reason),
    release: () => rows.release(),
    countPending: () => rows.countPending(),
  };
  const digest = rows.enqueueDigest?.bind(rows);
  return digest ? { ...outbox, enqueueDigest: digest } : outbox;
}

const EVENT_OF: Record<NotifyMessage['event'], NotifyEventType | null> = {
  changes: 'changes',
  failures: 'failures',
  recoveries: 'recoveries',
  test: null,
};

/** The rows a run's messages call for: each message the events let through, once per target. */
export function outboxRows(
  messages: readonly NotifyMessage[],
  targets: readonly KeyedTarget[],
  events: readonly NotifyEventType[],
): { targetId: string; message: NotifyMessage }[] {
  return messages
    .filter((m) => {
      const event = EVENT_OF[m.event];
      return event !== null && events.includes(event);
    })
    .flatMap((message) => targets.map((t) => ({ targetId: t.id, message })));
}

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

const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An outcome as the row's next state: a retry waits the schedule's delay, or Retry-After if longer. */
export function resultOf(
  outcome: SendOutcome,
  tries: number,
  deps: Pick<DeliverDeps, 'retryScheduleMs' | 'random'>,
  now: Date,
): NotificationResult {
  if (outcome.status === 'ok') return { status: 'delivered', detail: outcome.detail };
  if (outcome.status === 'refused') return { status: 'target_disabled', detail: outcome.detail };
  if (outcome.status === 'failed') return { status: 'failed', detail: outcome.detail };
  const schedule = deps.retryScheduleMs ?? defaultOf('webhooks', 'retryScheduleMs');
  const delay = retryDelayMs(schedule, tries, deps.random);
  if (delay === null) return { status: 'failed', detail: `${outcome.detail}; retries spent` };
  const wait = Math.max(delay, outcome.retryAfterMs ?? 0);
  return { status: 'pending', nextAttemptAt: new Date(now.getTime() + wait), detail: outcome.detail };
}

/** One pass of the worker: claims what is due, sends each once (paced per target), records each result. */
export async function deliverDue(deps: DeliverDeps, limit = 10): Promise<number> {
  const now = deps.now ?? (() => new Date());
  const claimed = await deps.outbox.claim(now(), limit);
  const byId = new Map(deps.targets.map((t) => [t.id, t]));
  const lastSent = new Map<string, number>();
  for (const row of claimed) {
    const target = byId.get(row.targetId);
    if (target === undefined) {
      await deps.outbox.complete(row.id, {
        status: 'failed',
        detail: 'the target is no longer in NOTIFY_URLS',
      });
      continue;
    }
    const wait = (lastSent.get(target.id) ?? -Infinity) + PACE_MS[target.kind] - now().getTime();
    if (wait > 0) await (deps.sleep ?? timer)(wait);
    lastSent.set(target.id, now().getTime());
    const outcome = await deps.send(row.message, target, { timeoutMs: deps.timeoutMs });
    const result = resultOf(outcome, row.attempts + 1, deps, now());
    if (result.status === 'target_disabled') {
      await deps.outbox.disableTarget(row.targetId, outcome.detail);
    }
    await deps.outbox.complete(row.id, result);
  }
  return claimed.length;
}
