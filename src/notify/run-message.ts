import type { ChangeSubject } from '../db/page-queries.js';
import type { ChangeRow } from '../db/schema.js';
import { parseJson } from '../json/lossless.js';
import type { ChangeFacts } from './describe-change.js';
import { changesMessage, type MessageContext, type NotifyMessage } from './message.js';

/** A stored JSON value parsed (numbers as the upstream wrote them); text that does not parse is kept as it is. */
export function parseStored(text: string | null): unknown {
  if (text === null) return null;
  try {
    return parseJson(text);
  } catch {
    return text;
  }
}

/** A stored change and its subject as the facts `describeChange` words: the one adapter of rows. */
export function factsOfChange(change: ChangeRow, subject: ChangeSubject | undefined): ChangeFacts {
  return {
    kind: change.kind,
    field: change.field,
    old: parseStored(change.oldValue),
    new: parseStored(change.newValue),
    uuid: change.uuid,
    slot: change.slot,
    name: subject?.name ?? '',
    post: subject?.post ?? '',
  };
}

/**
 * The message of a succeeded run from its stored changes (by id order, as the run wrote them) and
 * their subjects (`changeSubjects` of db/page-queries): what the run's transaction enqueues.
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
