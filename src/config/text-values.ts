// Setting values parsed from their text without zod: what a read command's config needs (its
// database settings), and what the settings table's zod schemas wrap, so each is parsed one way.

/** A parsed value, or what the text should have been. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A whole number from min to max, spaces around it allowed. */
export function parseWholeNumber(text: string, min: number, max: number): Parsed<number> {
  if (!/^\s*\d+\s*$/.test(text))
    return { ok: false, problem: `expected a whole number from ${min} to ${max}` };
  const value = Number(text);
  if (value < min) return { ok: false, problem: `expected at least ${min}` };
  if (value > max) return { ok: false, problem: `expected at most ${max}` };
  return { ok: true, value };
}
