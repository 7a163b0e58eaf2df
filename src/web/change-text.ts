import type { ChangeRow } from '../db/schema.js';
import type { ChangeSubject } from '../db/page-queries.js';
import { describeChange, type ChangeWords } from '../notify/describe-change.js';
import { factsOfChange, type ParsedValues } from '../notify/run-message.js';

/** A stored change in words, through the one `describeChange` every surface uses. */
export function changeWords(change: ChangeRow, subject: ChangeSubject | undefined): ChangeWords {
  return describeChange(factsOfChange(change, subject));
}

/**
 * A change as one plain sentence, for feed titles and CSV: "Zoë joined as QA engineer",
 * "José Álvarez: post 'qa engineer' → 'QA lead'", "Kate left", "Seán returned".
 */
export function changeSentence(
  change: ChangeRow,
  subject: ChangeSubject | undefined,
  parsed?: ParsedValues,
): string {
  return describeChange(factsOfChange(change, subject, parsed)).sentence;
}
