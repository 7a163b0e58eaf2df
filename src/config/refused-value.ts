// How a refused setting's value appears in an error. A value that may hold a secret (a token, a
// webhook URL with its token in the path, a database URL with its password) is never quoted, not
// even masked: masking text that failed to parse is guesswork, and a refused value is exactly the
// text that did not parse as expected. It is told apart by where it is and how long it is.

/**
 * How a setting's refused value may appear in an error (each setting's `echo` in the table):
 * `plain` quoted; `secret` (a token, or a list whose entries are credentials) only by its place and
 * length; `url` quoted only when nothing in it can be a credential (`mayShowUrl`), else as a secret.
 */
export type Echo = 'plain' | 'secret' | 'url';

/** Where a refused entry of a list setting sits (0-based), and its text, for its description. */
export interface RefusedEntry {
  index: number;
  count: number;
  text: string;
}

/**
 * A URL setting's value is quoted only when it is an absolute URL with nothing where credentials
 * and tokens go: no `@` (user-info), no `?` (a query), no `#`, no space (a pasted sentence).
 */
export function mayShowUrl(text: string): boolean {
  return URL.canParse(text) && !/[@?#\s]/.test(text);
}

const characters = (n: number) => (n === 1 ? '1 character' : `${n} characters`);

/**
 * The one description of a refused value: what is wrong and the fix (`problem`), after where the
 * value sits (an entry of a list) and, when its setting may hold a secret, only its length:
 * `entry 2 of 2: got 47 characters, not shown: expected an absolute http(s) URL`. A plain value is
 * quoted after the problem: `expected at most 65535 (got "99999")`.
 */
export function describeRefused(echo: Echo, text: string, problem: string, entry?: RefusedEntry): string {
  const place = entry ? `entry ${entry.index + 1} of ${entry.count}: ` : '';
  if (echo === 'plain' || (echo === 'url' && mayShowUrl(text))) {
    return `${place}${problem} (got ${JSON.stringify(text)})`;
  }
  return `${place}got ${characters(text.length)}, not shown: ${problem}`;
}

/**
 * The entry a list setting's schema names in a refused issue's params (`{ entry }`), so the loader
 * describes it as it describes every refused value; undefined when the issue is about the whole.
 */
export function refusedEntryOf(params: unknown): RefusedEntry | undefined {
  const entry = (params as { entry?: Partial<RefusedEntry> } | undefined)?.entry;
  if (typeof entry?.index !== 'number' || typeof entry.count !== 'number' || typeof entry.text !== 'string') {
    return undefined;
  }
  return { index: entry.index, count: entry.count, text: entry.text };
}
