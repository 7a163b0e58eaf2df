import type { ChangeRow } from '../db/schema.js';
import type { ChangeSubject } from '../db/page-queries.js';
import { describeChange, type ChangeWords } from '../notify/describe-change.js';
import { parseStored } from './format.js';

/** A stored change in words, through the one `describeChange` every surface uses. */
export function changeWords(change: ChangeRow, subject: ChangeSubject | undefined): ChangeWords {
  return describeChange({
    kind: change.kind,
    field: change.field,
    old: parseStored(change.oldValue),
    new: parseStored(change.newValue),
    uuid: change.uuid,
    slot: change.slot,
    name: subject?.name ?? '',
    post: subject?.post ?? '',
  });
}

/**
 * A change as one plain sentence, for feed titles and CSV: "Zoë joined as QA engineer",
 * "José Álvarez: post 'qa engineer' → 'QA lead'", "Kate left", "Seán returned".
 */
export function changeSentence(change: ChangeRow, subject: ChangeSubject | undefined): string {
  return changeWords(change, subject).sentence;
}
