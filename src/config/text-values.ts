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

/** One thing a schema refused: what and the fix, and for a list the entry it names (`params`). */
export interface SchemaIssue {
  code: string;
  message: string;
  params?: unknown;
}

/**
 * What the loader asks of a setting's schema: zod's schemas have this shape, and `textSchema` gives it
 * to a plain parser, for the settings a command parses without loading zod.
 */
export interface TextSchema<T> {
  safeParse(
    text: string | null,
  ): { success: true; data: T } | { success: false; error: { issues: readonly SchemaIssue[] } };
}

/** A plain parser as a setting's schema; unset (null) is refused unless `nullable`. */
export function textSchema<T>(parse: (text: string) => Parsed<T>): TextSchema<T>;
export function textSchema<T>(parse: (text: string) => Parsed<T>, nullable: true): TextSchema<T | null>;
export function textSchema<T>(parse: (text: string) => Parsed<T>, nullable = false): TextSchema<T | null> {
  const refused = (message: string) => ({
    success: false as const,
    error: { issues: [{ code: 'custom', message }] },
  });
  return {
    safeParse(text) {
      if (text === null) return nullable ? { success: true, data: null } : refused('expected a value');
      const parsed = parse(text);
      return parsed.ok ? { success: true, data: parsed.value } : refused(parsed.problem);
    },
  };
}
