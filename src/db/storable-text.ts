/**
 * A text as every store can keep it: PostgreSQL's text holds no U+0000, which a text quoting what
 * another party sent (an upstream in a run's reason, a receiver in its answer) may carry. Written
 * as its JSON escape, so a person reading it sees it was there; a text that cannot be stored would
 * leave its run `running`, or its delivery to be sent again.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\\u0000');
}
