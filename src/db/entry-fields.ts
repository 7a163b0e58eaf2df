// A stored entry's name and post as the SQLite store reads them with `body ->> '$.name'`, for a
// store that reads them in TypeScript instead (PostgreSQL's json operators fail a whole query on
// one malformed row, and render numbers otherwise).

/** Names and posts longer than this are cut in the directory and beside changes: held in memory. */
export const DIRECTORY_TEXT_CHARS = 300;

/**
 * The value SQLite's `->>` gives for `key` of a JSON object text: a string as itself, a number as a
 * number, true/false as 1/0, an object or array as its JSON text; null when the text is not a JSON
 * object or has no such key.
 */
export function entryField(body: string, key: string): string | number | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  if (!Object.hasOwn(parsed, key)) return null;
  const value = (parsed as Record<string, unknown>)[key];
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return JSON.stringify(value);
}

/** The first `count` code points of a text (SQL's substr counts characters, not UTF-16 units). */
export function firstCodePoints(text: string, count: number): string {
  let end = 0;
  for (let n = 0; n < count && end < text.length; n++) {
    const code = text.codePointAt(end) ?? 0;
    end += code > 0xffff ? 2 : 1;
  }
  return text.slice(0, end);
}

/**
 * A name or post as a page holds it: text, cut to DIRECTORY_TEXT_CHARS with a mark. Reads take
 * one character more than they keep, to know when to mark a cut.
 */
export function asText(value: unknown): string {
  const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
  return text.length > DIRECTORY_TEXT_CHARS ? `${text.slice(0, DIRECTORY_TEXT_CHARS)}…` : text;
}

/** `asText` of `substr(body ->> key, 1, DIRECTORY_TEXT_CHARS + 1)`, computed from the text itself. */
export function shownField(body: string | null, key: string): string {
  if (body === null) return '';
  const value = entryField(body, key);
  if (value === null) return '';
  // SQLite's substr reads a text as C does: up to its first NUL (a \u0000 in the entry).
  return asText(firstCodePoints(String(value).split('\0', 1)[0] ?? '', DIRECTORY_TEXT_CHARS + 1));
}
