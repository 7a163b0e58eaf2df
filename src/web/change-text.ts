import type { ChangeSubject } from '../db/run-commit.js';
import type { ChangeRow } from '../db/schema.js';
import { describeChange, sentenceText, type ChangeWords } from '../notify/describe-change.js';
import { factsOfChange, type ParsedValues } from '../notify/run-message.js';
import { isolatedText } from '../text/bidi.js';

/** A stored change in words, through the one `describeChange` every surface uses. */
export function changeWords(change: ChangeRow, subject: ChangeSubject | undefined): ChangeWords {
  return describeChange(factsOfChange(change, subject));
}

/**
 * A change as one plain sentence, for feed titles and CSV: "Zoë joined as QA engineer",
 * "José Álvarez: post 'qa engineer' → 'QA lead'", "Kate left", "Seán returned"; each piece of
 * upstream text isolated (`isolatedText`), so none turns the words after it around.
 */
export function changeSentence(
  change: ChangeRow,
  subject: ChangeSubject | undefined,
  parsed?: ParsedValues,
): string {
  return sentenceText(describeChange(factsOfChange(change, subject, parsed)), isolatedText);
}
