import { Feed } from 'feed';
import { Fragment, h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { ChangeSubject } from '../db/page-queries.js';
import { canonicalText } from '../db/history-views.js';
import type { ChangeRow } from '../db/schema.js';
import { changeSentence } from './change-text.js';
import { parseStored } from './format.js';
import type { MediaResolver } from './media-source.js';
import { PageContextValue, type PageContext } from './page-context.js';
import { configuredTimeZone } from './time-zone.js';
import { ChangeSentence } from './pages/components.js';
import { stringifyJson } from '../json/safe-json.js';

/** Characters XML 1.0 cannot carry at all, escaped or not (C0 controls, lone surrogates, U+FFFE/F). */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text for inside a CDATA section: no XML-illegal characters, and no `]]>` to end it early. */
function cdataSafe(html: string): string {
  return html.replace(NOT_XML, '\uFFFD').replaceAll(']]>', ']]&gt;');
}

export interface FeedInput {
  /**
   * The mirror's absolute base URL without a trailing slash: PUBLIC_BASE_URL (which may carry a
   * path, https://example.com/mirror) or the request's origin.
   */
  origin: string;
  /** Absolute URL of this feed request. */
  selfUrl: string;
  changes: ChangeRow[];
  subjects: Map<number, ChangeSubject>;
  media: MediaResolver;
  now: Date;
}

/** Atom 1.0: one entry per change, titled by its sentence, the highlighted diff as its content. */
export function changesAtom(input: FeedInput): string {
  const newest = input.changes[0];
  const feed = new Feed({
    id: `${input.origin}/changes/`,
    title: 'Coworker mirror: changes',
    link: `${input.origin}/changes/`,
    feedLinks: { atom: input.selfUrl },
    updated: newest ? new Date(newest.at) : input.now,
    author: { name: 'coworker mirror' },
    generator: false,
  });
  const context: PageContext = {
    now: input.now,
    media: input.media,
    imageOrigins: new Set(),
    demo: false,
    timeZone: configuredTimeZone(),
  };
  for (const change of input.changes) {
    const subject = input.subjects.get(change.id);
    const content = renderToString(
      h(
        PageContextValue.Provider,
        { value: context },
        h(ChangeSentence, { change, name: subject?.name ?? '', post: subject?.post ?? '' }),
      ),
    );
    // Readers show entries away from the mirror (mail digests, chat bots): every link absolute.
    // Only the page's own attributes can hold `="/` — upstream text is escaped (`"` is &quot;).
    const absolute = content.replace(/ (href|src)="\//g, ` $1="${input.origin}/`);
    feed.addItem({
      // The title is declared as HTML by the library: escape the sentence as text.
      title: cdataSafe(renderToString(h(Fragment, null, changeSentence(change, subject)))),
      id: `${input.origin}/coworkers/${change.uuid}/#change-${change.id}`,
      link: `${input.origin}/coworkers/${change.uuid}/`,
      date: new Date(change.at),
      content: cdataSafe(absolute),
    });
  }
  return withXmlBase(feed.atom1(), `${input.origin}/`);
}

const ATOM_ROOT = '<feed xmlns="http://www.w3.org/2005/Atom">';

/**
 * `xml:base` on the root, so a reader resolves any relative reference against the mirror even when
 * the feed travels without its address (a mail digest, a chat bot); every link is absolute as well.
 */
function withXmlBase(atom: string, base: string): string {
  const attribute = base.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  return atom.replace(ATOM_ROOT, `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="${attribute}">`);
}

/** A spreadsheet shows at most 32,767 characters in a cell; longer values are cut, and say so. */
const MAX_CSV_CELL_CHARS = 32_000;

/** A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR first) starts with a quote. */
function cell(text: string): string {
  const bounded = text.length > MAX_CSV_CELL_CHARS ? `${text.slice(0, MAX_CSV_CELL_CHARS)} … (cut)` : text;
  return /^[=+\-@\t\r]/.test(bounded) ? `'${bounded}` : bounded;
}

function valueCell(text: string | null): string {
  if (text === null) return '';
  // An object already in its canonical form is its own `stringifyJson` (as in the JSON Lines export).
  const canonical = text.charCodeAt(0) === 0x7b ? canonicalText(text) : undefined;
  if (canonical !== undefined) return cell(canonical);
  const value = parseStored(text);
  return cell(typeof value === 'string' ? value : stringifyJson(value));
}

const CSV_COLUMNS = [
  'id',
  'run',
  'at',
  'uuid',
  'appearance',
  'name',
  'kind',
  'field',
  'old',
  'new',
  'sentence',
];

/**
 * A field as csv-stringify wrote it with this module's options (test/web/csv-field.test.ts holds
 * the two together): quoted when it holds a comma, a quote or a line break, its quotes doubled.
 * Written here because the library's per-field machinery was most of a CSV export's time.
 */
export function csvField(text: string): string {
  if (!NEEDS_QUOTES.test(text)) return text;
  return `"${text.includes('"') ? text.replaceAll('"', '""') : text}"`;
}

const NEEDS_QUOTES = /[",\r\n]/;

const CSV_HEADER = `${CSV_COLUMNS.join(',')}\r\n`;

/** RFC 4180 (CRLF, quoted when needed) with a UTF-8 byte order mark, which spreadsheets need to read UTF-8. */
export function changesCsv(changes: readonly ChangeRow[], subjects: Map<number, ChangeSubject>): string {
  return changesCsvRecords(changes, subjects, { header: true });
}

/**
 * The records of `changesCsv`, the byte order mark and header only with `header`: a streamed export
 * writes its first batch with them and every later batch without, and the whole is one CSV.
 */
export function changesCsvRecords(
  changes: readonly ChangeRow[],
  subjects: Map<number, ChangeSubject>,
  options: { header: boolean },
): string {
  let text = options.header ? `\ufeff${CSV_HEADER}` : '';
  for (const change of changes) {
    const subject = subjects.get(change.id);
    // id, run, at and appearance are numbers and an ISO time: nothing in them needs quoting.
    text +=
      `${change.id},${change.runId},${csvField(change.at)},${csvField(change.uuid)},` +
      // 1-based, as every surface numbers appearances for people (`appearanceLabel`).
      `${change.slot + 1},${csvField(cell(subject?.name ?? ''))},${csvField(change.kind)},` +
      `${csvField(change.field ?? '')},${csvField(valueCell(change.oldValue))},` +
      `${csvField(valueCell(change.newValue))},${csvField(cell(changeSentence(change, subject)))}\r\n`;
  }
  return text;
}
