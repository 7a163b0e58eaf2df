import type { NotificationRows } from '../db/notify-outbox.js';
import type { DigestPlan } from '../db/run-commit.js';
import type { NotifyMessage } from './message.js';
import type { KeyedTarget, NotifyEventType } from './targets.js';

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
  return {
    // The run's commit writes the rows, in its own transaction (src/db/run-outbox.ts).
    enqueue: () => Promise.reject(new Error('notification rows are written by the run commit')),
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
    enqueueDigest: (plan) => rows.enqueueDigest(plan),
  };
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
