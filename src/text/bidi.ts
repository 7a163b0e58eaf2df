/**
 * Upstream text kept inside its field: a right-to-left override (U+202E) in a name must not turn
 * the rest of a sentence around, nor an isolate (U+2066–U+2069) or embedding (U+202A–U+202D) reach
 * past the name into the words around it. Each surface isolates a field its own way: HTML in `<bdi>`
 * around `balancedBidi(text)` (a browser's isolate is closed by a stray PDI inside it, as any other
 * is), plain text (chat, mail, feed titles, a CSV's sentence) with `isolatedText`, a terminal with
 * its controls drawn visibly (`visible` in cli/terminal.ts).
 */

const LRE = 0x202a;
const RLE = 0x202b;
const PDF = 0x202c;
const LRO = 0x202d;
const RLO = 0x202e;
const LRI = 0x2066;
const RLI = 0x2067;
const FSI = 0x2068;
const PDI = 0x2069;

/** The explicit bidi formatting characters: embeddings, overrides, isolates and their ends. */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;

/**
 * What can move the text around a field: a bidi control or right-to-left mark, or a character
 * Unicode gives a right-to-left or Arabic-number direction (the ranges it reserves for them:
 * Hebrew to Arabic Extended, their presentation forms, and the right-to-left planes' blocks).
 * Latin, Greek, Cyrillic, CJK, digits and punctuation cannot: a field of them is left as it is.
 */
const DIRECTIONAL =
  /[\u0590-\u08ff\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff\ufe70-\ufefe\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;

/**
 * Unicode's paragraph separators (bidi class B): each ends every embedding and isolate open before it.
 * CR LF is one separator.
 */
// eslint-disable-next-line no-control-regex -- the C0 paragraph separators are exactly what is matched
const PARAGRAPH = /(\r\n|[\n\r\u001c-\u001e\u0085\u2029])/;

const isParagraphEnd = (code: number): boolean =>
  code === 0x0a || code === 0x0d || (code >= 0x1c && code <= 0x1e) || code === 0x85 || code === 0x2029;

type Open = 'embedding' | 'isolate';

function closers(open: readonly Open[]): string {
  let text = '';
  for (let i = open.length - 1; i >= 0; i--) text += open[i] === 'isolate' ? '\u2069' : '\u202c';
  return text;
}

/**
 * `text` with its bidi controls balanced, as Unicode's algorithm pairs them: the embeddings,
 * overrides and isolates it opens are closed at its end and before each paragraph separator in it,
 * and an end (PDF, PDI) with nothing of the text's own to close is left out (it would close the
 * isolate the field sits in). Balanced controls are kept: a name that embeds a phrase reads as
 * its writer meant. Text without controls is returned as it is.
 */
export function balancedBidi(text: string): string {
  if (!BIDI_CONTROL.test(text)) return text;
  const open: Open[] = [];
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === LRE || code === RLE || code === LRO || code === RLO) open.push('embedding');
    else if (code === LRI || code === RLI || code === FSI) open.push('isolate');
    else if (code === PDF) {
      // A PDF ends the innermost embedding, and never one outside the innermost isolate.
      if (open.at(-1) !== 'embedding') continue;
      open.pop();
    } else if (code === PDI) {
      // A PDI ends the innermost isolate and every embedding opened within it.
      const isolate = open.lastIndexOf('isolate');
      if (isolate < 0) continue;
      open.length = isolate;
    } else if (isParagraphEnd(code) && open.length > 0) {
      out += closers(open);
      open.length = 0;
    }
    out += text[i];
  }
  return out + closers(open);
}

/**
 * A field of upstream text for a plain-text surface: each paragraph of it between FIRST STRONG
 * ISOLATE (U+2068) and POP DIRECTIONAL ISOLATE (U+2069), its own controls balanced inside, so it
 * takes its direction from its own letters and lends none to the words around it. A field with
 * nothing that can move those words (see DIRECTIONAL) is returned as it is.
 */
export function isolatedText(text: string): string {
  if (!DIRECTIONAL.test(text)) return text;
  return text
    .split(PARAGRAPH)
    .map((part, i) => (i % 2 === 1 || part === '' ? part : `\u2068${balancedBidi(part)}\u2069`))
    .join('');
}
