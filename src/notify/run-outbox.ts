import type { Config } from '../config/load-config.js';
import { pagesBaseUrl } from '../config/listeners.js';
import type { OutboxFacts, OutboxMessage, OutboxPlan } from '../db/run-commit.js';
import type { ChangeRow } from '../db/schema.js';
import type { ChangeFacts } from './describe-change.js';
import { countFirstListing, lineWho, MAX_LINES, type MessageContext, type NotifyMessage } from './message.js';
import { factsOfChange, runMessages, type RunOutcome } from './run-message.js';
import { thumbnailsOf } from './thumbnails.js';
import { keyedTargets, type NotifyEventType, type TargetKeys } from './targets.js';

/**
 * Notifications share the webhook outbox: each target is an endpoint keyed `notify:<targetId>`, so
 * the URL (and its secret) never reaches the database, and the webhook worker, which claims only
 * the URLs of WEBHOOK_URLS, never sends them.
 */
export { NOTIFY_ENDPOINT_PREFIX } from '../db/endpoint-keys.js';
import { NOTIFY_ENDPOINT_PREFIX } from '../db/endpoint-keys.js';

/** A notification message row's `type`: `notify.changes`, `notify.failures`, `notify.recoveries`. */
export const NOTIFY_TYPE_PREFIX = 'notify.';

/** What the run's transaction needs to write notification rows: plain data, no URLs. */
export interface NotifyOutboxSettings {
  targetIds: readonly string[];
  /** What runs write: under an hourly or daily digest, changes wait for the digest. */
  events: readonly NotifyEventType[];
  failureThreshold: number;
  context: MessageContext;
  /**
   * Where `/media/` answers, for thumbnails: PUBLIC_BASE_URL, which serves media whether or not
   * INTERNAL_PORT moved the pages elsewhere; null: no thumbnails.
   */
  mediaBaseUrl: string | null;
}

/**
 * The settings of per-run notification rows, the targets by their ids in the store `keys` are
 * of, or undefined when nothing is to be written (no targets). Under an hourly or daily digest,
 * runs write their failures and recoveries only.
 */
export function notifyOutboxSettings(
  config: Partial<Pick<Config, 'notify' | 'server'>> & Pick<Config, 'webhooks'>,
  keys: TargetKeys,
  timeZone: string = Intl.DateTimeFormat().resolvedOptions().timeZone,
): NotifyOutboxSettings | undefined {
  const notify = config.notify;
  if (!notify || notify.urls === null || notify.urls.length === 0) return undefined;
  const perRun = notify.digest.every === 'run';
  return {
    targetIds: keyedTargets(notify.urls, keys).map((t) => t.id),
    events: perRun ? notify.events : notify.events.filter((e) => e !== 'changes'),
    failureThreshold: config.webhooks.failureThreshold,
    context: { baseUrl: config.server ? pagesBaseUrl(config.server) : null, timeZone },
    mediaBaseUrl: config.server?.publicBaseUrl ?? null,
  };
}

/** The notification rows a run calls for, written in its own transaction; null when none can be. */
export function notifyRunOutbox(settings: NotifyOutboxSettings | undefined): OutboxPlan | null {
  if (!settings || settings.targetIds.length === 0) return null;
  return {
    urls: settings.targetIds.map((id) => `${NOTIFY_ENDPOINT_PREFIX}${id}`),
    channel: 'notify',
    messages: (facts) => notifyMessages(settings, facts),
  };
}

function notifyMessages(settings: NotifyOutboxSettings, facts: OutboxFacts): OutboxMessage[] {
  const outcome = runOutcome(settings, facts);
  if (outcome === null) return [];
  const messages = runMessages(outcome, settings.context);
  // One row per message; the plan's endpoints give each target its own delivery of it.
  return messages.filter((m) => m.event !== 'test' && settings.events.includes(m.event)).map(messageRow);
}

function runOutcome(settings: NotifyOutboxSettings, facts: OutboxFacts): RunOutcome | null {
  const { run } = facts;
  if (run.status !== 'succeeded' && run.status !== 'failed') return null;
  const finishedAt = run.finishedAt ?? new Date().toISOString();
  const streak = {
    run: { id: run.id, status: run.status, finishedAt, errorMessage: run.errorMessage },
    failedStreak: run.status === 'failed' ? facts.failedBefore + 1 : facts.failedBefore,
    streakSince: facts.streakSince,
    servingSince: facts.servingSince,
    failureThreshold: settings.failureThreshold,
  };
  if (run.status === 'succeeded' && facts.firstListingRun === run.id) {
    // The team as first found: counted as the rows pass, none looked up, parsed or worded.
    return { ...streak, changes: [], firstListing: countFirstListing(run.id, finishedAt, facts.changes()) };
  }
  const rows = run.status === 'succeeded' ? [...facts.changes()] : [];
  // Only the first MAX_LINES changes are worded; the others are only counted, so a run of 100,000
  // changes neither looks up nor parses them inside its transaction.
  const worded = rows.slice(0, MAX_LINES);
  const subjects = facts.subjectsOf(worded);
  const thumbnails = thumbnailsOf(worded, facts, settings.mediaBaseUrl);
  const changes = rows.map((row, i) =>
    i < MAX_LINES ? factsOfChange(row, subjects.get(row.id)) : counted(row),
  );
  const imageOf = new Map(worded.map((row, i) => [changes[i], thumbnails.get(row.id) ?? null]));
  return { ...streak, changes, imageOf: (change) => imageOf.get(change) ?? null };
}

/** A change as `countChanges` needs it: its kind and appearance, nothing to word. */
export function counted(row: ChangeRow): ChangeFacts {
  const { kind, field, uuid, slot } = row;
  return { kind, field, uuid, slot, old: null, new: null, name: '', post: '' };
}

/**
 * The text by which a stored message (`messageRow`'s body) names a person in one of its lines:
 * what a prune looks for to forget the messages that tell of someone.
 */
export function bodyMentionOf(name: string, uuid: string): string {
  return `"who":${JSON.stringify(lineWho(name, uuid))}`;
}

function messageRow(message: NotifyMessage): OutboxMessage {
  return { type: `${NOTIFY_TYPE_PREFIX}${message.event}`, body: JSON.stringify(message) };
}
