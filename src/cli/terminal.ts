import { createRequire } from 'node:module';
import { styleText } from 'node:util';
import type StringWidth from 'string-width';

const require = createRequire(import.meta.url);

/**
 * string-width builds an Intl.Segmenter when it loads, a visible part of a short command: it is
 * required (Node ≥ 20.19 requires an ES module synchronously) the first time a cell needs more than
 * its length.
 */
let stringWidth: typeof StringWidth | undefined;
function measuredWidth(text: string): number {
  stringWidth ??= (require('string-width') as { default: typeof StringWidth }).default;
  return stringWidth(text);
}

/** How human output is drawn: colour or not, and "now" for relative times (fixed in tests). */
export interface Style {
  color: boolean;
  now: number;
}

/** Colour only on a terminal that has it; `hasColors()` honours NO_COLOR, FORCE_COLOR and TERM. */
export function styleFor(stream: NodeJS.WriteStream): Style {
  return { color: stream.isTTY === true && stream.hasColors(), now: Date.now() };
}

type Paint = Parameters<typeof styleText>[0];

export function paint(style: Style, format: Paint, text: string): string {
  // The decision is made once, for the stream written to (styleFor); styleText would check stdout.
  return style.color ? styleText(format, visible(text), { validateStream: false }) : visible(text);
}

// C0 and DEL, C1, the line and paragraph separators, and the bidirectional controls that reorder
// what a terminal shows (a "Trojan source" line). Tab and newline too: a value is one cell.
// eslint-disable-next-line no-control-regex -- control characters are exactly what is matched
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|\p{Cs}/gu;

function shown(char: string): string {
  const code = char.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return '^?';
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * Text from the upstream as a terminal should show it: control characters drawn visibly, as `less`
 * and `git log` do (`^[` for ESC, `^?` for DEL, `<U+0085>` for C1, `<U+2028>`), so a hostile value
 * cannot clear the screen, retitle the window, recolour the output or reorder a line.
 */
export function visible(text: string): string {
  return text.replace(UNSAFE, shown);
}

/** `visible` line by line: a message of several lines keeps its line breaks. */
export function visibleLines(text: string): string {
  return text.split('\n').map(visible).join('\n');
}

const two = (n: number) => String(n).padStart(2, '0');

/** Local time without milliseconds, e.g. `2026-11-21 17:14:55`; the zone is the process's (TZ). */
export function localTime(iso: string): string {
  const d = new Date(iso);
  return (
    `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
    `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`
  );
}

type TimeUnit = 'day' | 'hour' | 'minute' | 'second';
const UNITS: [TimeUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];

/**
 * English short relative times as `Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' })`
 * writes them, which test/cli/terminal.test.ts holds it to: building that formatter loads its
 * locale data, a large part of a `runs` that should take twice a bare `node -e 0`.
 */
const SHORT: Record<TimeUnit, { zero: string; one?: [string, string]; unit: [string, string] }> = {
  day: { zero: 'today', one: ['yesterday', 'tomorrow'], unit: ['day', 'days'] },
  hour: { zero: 'this hour', unit: ['hr.', 'hr.'] },
  minute: { zero: 'this minute', unit: ['min.', 'min.'] },
  second: { zero: 'now', unit: ['sec.', 'sec.'] },
};

/** `-5, 'day'` → `5 days ago`; `1, 'day'` → `tomorrow`; `0, 'second'` → `now`. */
export function relativeTime(value: number, unit: TimeUnit): string {
  const words = SHORT[unit];
  const size = Math.abs(value);
  if (size === 0) return words.zero;
  if (size === 1 && words.one) return words.one[value < 0 ? 0 : 1];
  const count = `${String(size).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} ${words.unit[size === 1 ? 0 : 1]}`;
  return value < 0 ? `${count} ago` : `in ${count}`;
}

/** `5 min. ago`, `yesterday`, `now`: the largest unit that fits. */
function ago(iso: string, now: number): string {
  const ms = new Date(iso).getTime() - now;
  for (const [unit, size] of UNITS) {
    if (Math.abs(ms) >= size || unit === 'second') return relativeTime(Math.round(ms / size), unit);
  }
  return '';
}

/** Absolute and relative: `2026-11-21 17:14:55 (5 min. ago)`. */
export function when(iso: string, style: Style): string {
  return `${localTime(iso)} ${paint(style, 'dim', `(${ago(iso, style.now)})`)}`;
}

// Our own colour codes (paint): a value's ESC is drawn as `^[` by `visible`, so no other reaches here.
// eslint-disable-next-line no-control-regex -- the escape is exactly what is matched
const SGR = /\u001b\[[0-9;]*m/g;
// One column per UTF-16 unit: printable ASCII, Latin-1 and Latin Extended but for the soft hyphen
// (none) and © ® (emoji, two), and the header's `↺`. test/cli/terminal.test.ts holds it against string-width.
const ONE_COLUMN_EACH = /^[\u0020-\u007e\u00a0-\u00a8\u00aa-\u00ac\u00af-\u02ff\u21ba]*$/;

/**
 * The width a cell takes on screen. Most cells are plain Latin text, counted by their length:
 * string-width's first call (Intl.Segmenter, the emoji expression) costs a large part of a `runs`
 * that should take twice a bare `node -e 0`.
 */
export function cellWidth(cell: string): number {
  const bare = cell.includes('\u001b') ? cell.replace(SGR, '') : cell;
  return ONE_COLUMN_EACH.test(bare) ? bare.length : measuredWidth(cell);
}

export type Align = 'left' | 'right';

/**
 * Aligns cells in columns by their display width (accents, wide characters and colour codes take
 * the room they take on screen); the last column is left ragged.
 */
export function table(rows: readonly (readonly string[])[], align: readonly Align[] = []): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cellWidth(cell))));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        if (i === row.length - 1 && align[i] !== 'right') return cell;
        const pad = ' '.repeat((widths[i] ?? 0) - cellWidth(cell));
        return align[i] === 'right' ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd(),
  );
}
