import type { ChangeSubject } from '../db/run-commit.js';
import { canonicalText } from '../views/history-views.js';
import type { ChangeRow } from '../db/schema.js';
import { stringifyJson } from '../json/safe-json.js';
import { changeSentence } from './change-text.js';
import { parseStored } from './format.js';
import { worded } from '../notify/run-message.js';
import { isCanonicalJson } from '../json/canonical-json.js';

// The changes as CSV, for the feed's `.csv` and the whole-history export: apart from the Atom feed
// so an export loads neither preact nor the feed writer.

/** A spreadsheet shows at most 32,767 characters in a cell; longer values are cut, and say so. */
const MAX_CSV_CELL_CHARS = 32_000;

/** A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR first) starts with a quote. */
function cell(text: string): string {
  const bounded = text.length > MAX_CSV_CELL_CHARS ? `${text.slice(0, MAX_CSV_CELL_CHARS)} … (cut)` : text;
  return /^[=+\-@\t\r]/.test(bounded) ? `'${bounded}` : bounded;
}

/** `valueCell(text)` of a text already parsed to `value`: a canonical text is its own writing. */
function parsedCell(text: string | null, value: unknown): string {
  if (text === null) return '';
  if (typeof value === 'string') return cell(value);
  return cell(isCanonicalJson(text) ? text : stringifyJson(value));
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
    // A field's values are parsed once, for their cells and for the sentence that quotes them.
    const parsed = worded(change.kind)
      ? { old: parseStored(change.oldValue), new: parseStored(change.newValue) }
      : undefined;
    const [oldCell, newCell] = parsed
      ? [parsedCell(change.oldValue, parsed.old), parsedCell(change.newValue, parsed.new)]
      : [valueCell(change.oldValue), valueCell(change.newValue)];
    // id, run, at and appearance are numbers and an ISO time: nothing in them needs quoting.
    text +=
      `${change.id},${change.runId},${csvField(change.at)},${csvField(change.uuid)},` +
      // 1-based, as every surface numbers appearances for people (`appearanceLabel`).
      `${change.slot + 1},${csvField(cell(subject?.name ?? ''))},${csvField(change.kind)},` +
      `${csvField(change.field ?? '')},${csvField(oldCell)},${csvField(newCell)},` +
      `${csvField(cell(changeSentence(change, subject, parsed)))}\r\n`;
  }
  return text;
}
