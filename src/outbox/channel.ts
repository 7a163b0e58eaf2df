import type { Logger } from '../logger.js';

// What the outbox worker asks of a channel (webhooks, chat and mail notifications): the worker owns
// the loop, the lanes, the retry decisions and the log; a channel knows its rows and its wire.

/** What one send came to, as its channel reads the receiver's answer. */
export type SendVerdict =
  | { kind: 'delivered' }
  /** Worth trying again (a 5xx, a 429, the network, a timeout); after `retryAfterMs` if the receiver said so. */
  | { kind: 'retry'; retryAfterMs: number | null }
  /** The receiver refused the target for good (a deleted chat webhook, a 410 Gone): disable the target. */
  | { kind: 'refused'; reason: string }
  /** This row can never go (our request was refused, its target is no longer configured). */
  | { kind: 'failed' };

/** What becomes of a row after its send: the worker decides it once for every channel. */
export type RowOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; nextAttemptAt: Date }
  | { kind: 'failed'; retriesSpent: boolean }
  | { kind: 'refused'; reason: string };

/** One send of one row, done: its verdict, what the log says of it, and how its outcome is kept. */
export interface SentRow {
  verdict: SendVerdict;
  /** Log fields of the attempt (status, duration, error): never a secret or a target's URL. */
  fields: Record<string, unknown>;
  /** Records the outcome (the row's next state, the delivery log, a disabled target) and ends the lease. */
  record(outcome: RowOutcome): Promise<void>;
}

/** A row its channel leased for the worker. */
export interface OutboxItem {
  /** Rows of one lane (an endpoint, a target) are sent one at a time, in the order claimed. */
  lane: string;
  /** Least time between the starts of two sends in this lane (a service's rate limit). */
  paceMs: number;
  /** Failed attempts of this row so far (0 before the first): its place in the retry schedule. */
  tries: number;
  /** Log fields naming the row: never a secret or a target's URL. */
  fields: Record<string, unknown>;
  /** One attempt; `signal` aborts at the worker's stop. Null: the stop cut it, nothing to record. */
  send(signal: AbortSignal): Promise<SentRow | null>;
  /** Hands the lease back unsent (the worker stopped): the row goes out at once elsewhere or later. */
  release(): Promise<void>;
}

export interface ClaimOptions {
  now: Date;
  /** Lanes with a row in flight or queued: a channel that keeps order per lane leaves them out. */
  busyLanes: ReadonlySet<string>;
  /** Rows the worker takes at most now (its bound on rows in flight). */
  room: number;
}

export interface OutboxChannel {
  /** The word of the log lines ("webhook delivered", "notification attempt failed; will retry"). */
  noun: string;
  /** Where the lines of its rows go, when not to the worker's log (a sync's notifications: warnings only). */
  log?: Logger;
  /** The delays before each retry. */
  retryScheduleMs: readonly number[];
  /**
   * How often to look when nothing woke the worker: a channel whose claim cannot say when its next
   * row becomes due (a retry) asks for a shorter look than the safety net.
   */
  pollMs: number;
  /** A step of every pass before the claim (the notifications' due digest). */
  beforeClaim?(now: Date): Promise<void>;
  /** Leases due rows; `nextWakeAt`: when the next row not claimed becomes due, if the channel knows. */
  claim(options: ClaimOptions): Promise<{ items: OutboxItem[]; nextWakeAt: number | null }>;
  /** Rows still to be sent, whatever their due time. */
  pending(): Promise<number>;
  /** At stop, after the last send: hands back whatever leases the channel still holds; frees its wire. */
  close(): Promise<void>;
}
