import type { ChangeSubject } from '../db/run-commit.js';
import type { ChangeRow } from '../db/schema.js';
import { parseJson } from '../json/lossless.js';
import type { ChangeFacts } from './describe-change.js';
import {
  changesMessage,
  failureMessage,
  firstListingMessage,
  recoveryMessage,
  type FirstListing,
  type MessageContext,
  type NotifyMessage,
} from './message.js';

/** A stored JSON value parsed (numbers as the upstream wrote them); text that does not parse is kept as it is. */
export function parseStored(text: string | null): unknown {
  if (text === null) return null;
  try {
    // A JSON string holds no number to keep as written: V8's parser reads it alike, at a fraction of
    // the lossless parser's cost (a changed field's value, in every CSV row and sentence).
    if (text.charCodeAt(0) === 0x22) return JSON.parse(text) as string;
    return parseJson(text);
  } catch {
    return text;
  }
}

/** Whether a change's sentence quotes its values: a field's or a file's change. */
export const worded = (kind: ChangeRow['kind']): boolean => kind === 'changed' || kind === 'media_changed';

/** A change's values as `parseStored` reads them, for a caller that parsed them already. */
export interface ParsedValues {
  old: unknown;
  new: unknown;
}

/** A stored change and its subject as the facts `describeChange` words: the one adapter of rows. */
export function factsOfChange(
  change: ChangeRow,
  subject: ChangeSubject | undefined,
  parsed?: ParsedValues,
): ChangeFacts {
  // Only a changed field's or file's words quote its values: an entry's whole body, the value of an
  // added, removed or returned change, is never parsed for a sentence (it was most of a CSV export's
  // sentence cost); `counted` leaves them null the same way.
  const quoted = worded(change.kind);
  return {
    kind: change.kind,
    field: change.field,
    old: quoted ? (parsed ? parsed.old : parseStored(change.oldValue)) : null,
    new: quoted ? (parsed ? parsed.new : parseStored(change.newValue)) : null,
    uuid: change.uuid,
    slot: change.slot,
    name: subject?.name ?? '',
    post: subject?.post ?? '',
  };
}

/**
 * The message of a succeeded run from its stored changes (by id order, as the run wrote them) and
 * their subjects (`changeSubjects` of db/change-reads): what the run's transaction enqueues.
 */
export function runChangesMessage(
  run: { id: number; finishedAt: string },
  changes: readonly ChangeRow[],
  subjects: ReadonlyMap<number, ChangeSubject>,
  ctx: MessageContext,
): NotifyMessage {
  return changesMessage(
    {
      runId: run.id,
      finishedAt: run.finishedAt,
      changes: changes.map((c) => factsOfChange(c, subjects.get(c.id))),
    },
    ctx,
  );
}

/** What decides a run's messages, read in the run's own transaction. */
export interface RunOutcome {
  run: { id: number; status: 'succeeded' | 'failed'; finishedAt: string; errorMessage: string | null };
  /** The run's changes, in the order it wrote them (empty for a failed run and a first listing). */
  changes: readonly ChangeFacts[];
  /** Set when the run is the store's first listing: its changes are told as this count instead. */
  firstListing?: FirstListing | null;
  /** Failed runs in a row ending with this run (failed) or just before it (succeeded). */
  failedStreak: number;
  /** When the streak's first failed run started. */
  streakSince: string | null;
  /** When the snapshot still served was taken (the latest succeeded run), or null. */
  servingSince: string | null;
  /** Failed runs in a row that make a failure worth telling (WEBHOOK_FAILURE_THRESHOLD). */
  failureThreshold: number;
  /** The mirror's thumbnail URL of a change's coworker, when it holds the picture. */
  imageOf?: (change: ChangeFacts) => string | null;
}

/**
 * The messages one run calls for: a failure once per streak (when it reaches the threshold), a
 * recovery after such a streak, and the changes of a run that has any; a first listing's changes
 * are one message of how many coworkers the mirror now follows. The events setting filters them
 * when they are written to the outbox.
 */
export function runMessages(outcome: RunOutcome, ctx: MessageContext): NotifyMessage[] {
  const { run, failedStreak, failureThreshold } = outcome;
  if (run.status === 'failed') {
    if (failedStreak !== failureThreshold) return [];
    const reason = run.errorMessage ?? 'the run failed';
    return [
      failureMessage(
        {
          failedRuns: failedStreak,
          since: outcome.streakSince ?? run.finishedAt,
          reason,
          servingSince: outcome.servingSince,
        },
        ctx,
      ),
    ];
  }
  const messages: NotifyMessage[] = [];
  if (failedStreak >= failureThreshold) {
    messages.push(recoveryMessage({ at: run.finishedAt, failedRuns: failedStreak }, ctx));
  }
  if (outcome.firstListing) {
    messages.push(firstListingMessage(outcome.firstListing, ctx));
  } else if (outcome.changes.length > 0) {
    messages.push(
      changesMessage(
        {
          runId: run.id,
          finishedAt: run.finishedAt,
          changes: outcome.changes,
          ...(outcome.imageOf ? { imageOf: outcome.imageOf } : {}),
        },
        ctx,
      ),
    );
  }
  return messages;
}
