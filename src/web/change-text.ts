import type { ChangeRow } from '../db/schema.js';
import type { ChangeSubject } from '../db/page-queries.js';
import { clip, parseStored, valueText } from './format.js';

/** The longest value a one-line sentence quotes. */
const QUOTE_BYTES = 200;

const quote = (value: unknown): string => {
  const { text, cutFrom } = clip(valueText(value), QUOTE_BYTES);
  return `'${text}${cutFrom !== null ? '…' : ''}'`;
};

/**
 * A change as one plain sentence, for feed titles and CSV: "Zoë joined as QA engineer",
 * "José Álvarez: post 'qa engineer' → 'QA lead'", "Kate left", "Seán returned".
 */
export function changeSentence(change: ChangeRow, subject: ChangeSubject | undefined): string {
  const name = clip(subject?.name.trim() || change.uuid, QUOTE_BYTES).text;
  const post = subject?.post.trim() ? clip(subject.post, QUOTE_BYTES).text : '';
  switch (change.kind) {
    case 'added':
      return post ? `${name} joined as ${post}` : `${name} joined`;
    case 'removed':
      return `${name} left`;
    case 'returned':
      return post ? `${name} returned as ${post}` : `${name} returned`;
    case 'changed':
      return `${name}: ${(change.field ?? '').replaceAll('_', ' ')} ${quote(parseStored(change.oldValue))} → ${quote(parseStored(change.newValue))}`;
    case 'media_changed':
      return `${name}: new ${(change.field ?? 'media').replaceAll('_', ' ')} bytes at the same address`;
  }
}
