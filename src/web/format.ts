import { stringifyJson } from '../json/safe-json.js';
/** Pure text helpers for the pages: bounded values, ages and durations in words. */

/** The most of one upstream value a page shows; the rest is cut with a note of the full size. */
const MAX_SHOWN_BYTES = 2048;

export interface Clipped {
  text: string;
  /** Full size in bytes when cut, else null. */
  cutFrom: number | null;
}

/** Cuts `text` to at most `maxBytes` of UTF-8 without splitting a character. */
export function clip(text: string, maxBytes = MAX_SHOWN_BYTES): Clipped {
  // Cheap exit: a string of n UTF-16 units is at most 3n bytes.
  if (text.length * 3 <= maxBytes) return { text, cutFrom: null };
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return { text, cutFrom: null };
  let end = Math.min(text.length, maxBytes);
  while (end > 0 && Buffer.byteLength(text.slice(0, end)) > maxBytes) end = Math.floor(end * 0.9);
  // Never leave half a surrogate pair.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), cutFrom: bytes };
}

/** A JSON value of an upstream field as a person reads it. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value) && value.length === 0) return 'none';
  // Iterative: a stored value nested thousands deep must not overflow the stack.
  return stringifyJson(value);
}

// One parser of stored values for the pages and the messages.
export { parseStored } from '../notify/run-message.js';

const UNITS: [number, string][] = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
];

/** 93 minutes → "1 hour 33 minutes"; the two largest units only. */
export function durationWords(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [size, unit] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0 || parts.length > 0) {
      if (n > 0) parts.push(`${n} ${unit}${n === 1 ? '' : 's'}`);
      rest -= n * size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/** "3 hours ago" / "in 5 minutes" relative to `now`. */
export function relativeWords(at: Date, now: Date): string {
  const delta = at.getTime() - now.getTime();
  const words = durationWords(Math.abs(delta));
  return delta > 0 ? `in ${words}` : `${words} ago`;
}
