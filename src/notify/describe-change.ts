import { stringifyJson } from '../json/safe-json.js';

/** The kinds of change a run records (the `changes.kind` column). */
export type ChangeKind = 'added' | 'removed' | 'returned' | 'changed' | 'media_changed';

/** What a sentence needs of a change: its row's facts, values parsed, and who it concerns. */
export interface ChangeFacts {
  kind: ChangeKind;
  field: string | null;
  /** The parsed old and new values; for media_changed, `{ url, sha256 }`. */
  old: unknown;
  new: unknown;
  uuid: string;
  /** 0 for the first appearance of the uuid in the listing, 1 for the second… */
  slot: number;
  /** The coworker's name and post at that run ('' when unknown). */
  name: string;
  post: string;
}

/** A piece of upstream text within a sentence: each medium isolates it its own way (`text/bidi.ts`). */
export interface Upstream {
  upstream: string;
}

/** Words of a sentence: the mirror's own, and pieces of upstream text. */
export type Phrase = readonly (string | Upstream)[];

/** A change in words, in parts, so each medium can link the name and isolate and escape each part its way. */
export interface ChangeWords {
  /** The name (or the uuid when the name is empty), bounded: upstream text. */
  who: string;
  /** " (appearance 2)" for a repeated uuid's later appearances, else ''. */
  appearance: string;
  /** Between the name and what happened: ': ' after a field's or a file's change, else ' '. */
  joint: string;
  /** What happened, without the name: "joined as QA engineer", "post 'a' → 'b'". */
  what: Phrase;
}

/** A phrase as one text, each piece of upstream text as `field` gives it (the medium's isolation). */
export function phraseText(phrase: Phrase, field: (upstream: string) => string): string {
  let text = '';
  for (const part of phrase) text += typeof part === 'string' ? part : field(part.upstream);
  return text;
}

/**
 * The whole sentence as one text: "Zoë joined as QA engineer", "José Álvarez: post 'a' → 'b'",
 * the name and every other piece of upstream text through `field`.
 */
export function sentenceText(words: ChangeWords, field: (upstream: string) => string): string {
  return `${field(words.who)}${words.appearance}${words.joint}${phraseText(words.what, field)}`;
}

/** The longest name, post or value a one-line sentence quotes, in UTF-8 bytes. */
const QUOTE_BYTES = 200;

/** Cuts `text` to at most `maxBytes` of UTF-8 without splitting a character. */
export function clipText(text: string, maxBytes: number): { text: string; cut: boolean } {
  // Cheap exit: a string of n UTF-16 units is at most 3n bytes.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return { text, cut: false };
  let end = Math.min(text.length, maxBytes);
  while (end > 0 && Buffer.byteLength(text.slice(0, end)) > maxBytes) end = Math.floor(end * 0.9);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), cut: true };
}

/**
 * A URL the WHATWG parser surely accepts and whose path it leaves as written: http(s), a host of
 * letters, digits, hyphens and dots not read as an IPv4 address (or a dotted quad within 0-255),
 * a port under 10,000, and a path without `%`, `\\`, a `.` or `..` segment, a query or a fragment.
 * Its file name is its last segment as it stands: what a media URL almost always is, and the
 * parser (URL.canParse, then new URL) was the costliest part of a CSV export's sentences.
 */
const PLAIN_URL =
  /^https?:\/\/(?:(?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))(?::\d{1,4})?(?:\/(?!\.\.?(?:\/|$))[\w.~!$&'()*+,;=:@-]*)*$/i;

/** An absolute http(s) URL's file name ("photo.jpg"), or null when `text` is no such URL. */
export function fileNameOf(text: string): string | null {
  if (PLAIN_URL.test(text)) {
    const trimmed = text.endsWith('/') ? text.replace(/\/+$/, '') : text;
    const slash = trimmed.lastIndexOf('/');
    const last = trimmed.slice(slash + 1);
    // No path, or only slashes: the host's `//` is the last one found.
    return last === '' || slash <= text.indexOf('//') + 1 ? null : last;
  }
  return parsedFileNameOf(text);
}

/** `fileNameOf` through the WHATWG parser: any URL, percent-escapes decoded. */
export function parsedFileNameOf(text: string): string | null {
  if (!/^https?:\/\//i.test(text) || !URL.canParse(text)) return null;
  const last = new URL(text).pathname
    .split('/')
    .filter((s) => s !== '')
    .pop();
  if (last === undefined) return null;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** A field's value as a person reads it: files by name, yes/no, none; other JSON as JSON. */
export function valueWords(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return fileNameOf(value) ?? value;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none';
    if (value.every((v) => typeof v === 'string')) return value.map((v) => valueWords(v)).join(', ');
  }
  // Iterative: a stored value nested thousands deep must not overflow the stack.
  return stringifyJson(value);
}

const bounded = (text: string): string => {
  const clipped = clipText(text, QUOTE_BYTES);
  return clipped.cut ? `${clipped.text}…` : clipped.text;
};

/** Who a sentence is about, as every message names them: the name, or the uuid when it is empty. */
export const whoWords = (name: string, uuid: string): string => bounded(name.trim() || uuid);

const upstream = (text: string): Upstream => ({ upstream: text });

/** A field's value quoted: `'QA lead'`, the value itself upstream text. */
const quote = (value: unknown): Phrase => ["'", upstream(bounded(valueWords(value))), "'"];

export const fieldWords = (field: string | null): string => (field ?? 'media').replaceAll('_', ' ');

/**
 * The one numbering of a uuid's appearances for people, 1-based: "appearance 2" is the uuid's
 * second listing (slot 1) on every surface; the API's JSON keeps the 0-based `slot` as data.
 */
export function appearanceLabel(slot: number): string {
  return `appearance ${slot + 1}`;
}

/** The file a media_changed change concerns, from its new (else old) `{ url }`. */
function mediaFile(facts: ChangeFacts): string | null {
  for (const side of [facts.new, facts.old]) {
    if (side !== null && typeof side === 'object' && 'url' in side && typeof side.url === 'string') {
      return fileNameOf(side.url) ?? side.url;
    }
  }
  return null;
}

function whatOf(facts: ChangeFacts): Phrase {
  const post = facts.post.trim();
  const as = (verb: string): Phrase => (post === '' ? [verb] : [`${verb} as `, upstream(bounded(post))]);
  // A field's name is the upstream's too: a field the contract does not name may be called anything.
  const field = upstream(fieldWords(facts.field));
  switch (facts.kind) {
    case 'added':
      return as('joined');
    case 'removed':
      return ['left'];
    case 'returned':
      return as('returned');
    case 'changed':
      return [field, ' ', ...quote(facts.old), ' → ', ...quote(facts.new)];
    case 'media_changed': {
      const file = mediaFile(facts);
      const named: Phrase = file === null ? [] : [' (', upstream(bounded(file)), ')'];
      return ['new ', field, ' bytes at the same address', ...named];
    }
  }
}

/**
 * A change in words: the one wording of pages, feeds, the CSV, the CLI and chat and e-mail
 * messages ("Zoë joined as QA engineer", "José Álvarez: post 'qa engineer' → 'QA lead'",
 * "Kate left", "Ada: new emoji file bytes at the same address (party.gif)").
 */
export function describeChange(facts: ChangeFacts): ChangeWords {
  const who = whoWords(facts.name, facts.uuid);
  const appearance = facts.slot > 0 ? ` (${appearanceLabel(facts.slot)})` : '';
  const joint = facts.kind === 'changed' || facts.kind === 'media_changed' ? ': ' : ' ';
  return { who, appearance, joint, what: whatOf(facts) };
}

export interface RunCounts {
  joined: number;
  left: number;
  returned: number;
  /** People (appearances) with at least one changed field or file. */
  changed: number;
}

/** How many people a run's changes concern, by what happened to them. */
export function countChanges(changes: readonly ChangeFacts[]): RunCounts {
  const changed = new Set<string>();
  const counts: RunCounts = { joined: 0, left: 0, returned: 0, changed: 0 };
  for (const c of changes) {
    if (c.kind === 'added') counts.joined++;
    else if (c.kind === 'removed') counts.left++;
    else if (c.kind === 'returned') counts.returned++;
    else changed.add(`${c.uuid}#${c.slot}`);
  }
  counts.changed = changed.size;
  return counts;
}

/** A run's title: "Team page: 2 joined, 1 left, 3 changed" (only the parts that happened). */
export function runTitle(counts: RunCounts): string {
  const parts = [
    counts.joined > 0 ? `${counts.joined} joined` : '',
    counts.left > 0 ? `${counts.left} left` : '',
    counts.returned > 0 ? `${counts.returned} returned` : '',
    counts.changed > 0 ? `${counts.changed} changed` : '',
  ].filter((p) => p !== '');
  return `Team page: ${parts.length > 0 ? parts.join(', ') : 'no changes'}`;
}
