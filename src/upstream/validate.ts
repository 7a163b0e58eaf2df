import type { z } from 'zod';
import { MirrorError, truncateForMessage } from '../errors.js';
import { defaultOf } from '../config/settings.js';
import { isLosslessNumber } from '../json/lossless.js';
import { stringifyJson } from '../json/safe-json.js';
import { KNOWN_FIELDS, coworkerSchema, pageEnvelopeSchema } from './contract.js';

/** One validated entry; `index` is its 0-based position in the page's `results`. */
export interface ValidatedEntry {
  index: number;
  uuid: string;
  /** The entry re-serialised from the upstream's own object, so its key order is the upstream's. */
  json: string;
}

/** A field the contract does not name, with where it was first seen. */
export interface UnknownField {
  field: string;
  page: number;
  index: number;
}

export interface ValidatedPage {
  page: number;
  count: number;
  next: string | null;
  previous: string | null;
  entries: ValidatedEntry[];
  /** Unknown entry fields, each reported once per page at its first entry. */
  unknownFields: UnknownField[];
  /** Envelope keys beyond count/next/previous/results; they cannot be mirrored, only reported. */
  unknownEnvelopeFields: string[];
}

const ENVELOPE_FIELDS: ReadonlySet<string> = new Set(Object.keys(pageEnvelopeSchema.shape));

/** Bounds on one entry, checked before anything recursive touches it. */
export interface EntryLimits {
  /** Deepest nesting of arrays and objects; the entry object itself is depth 1. */
  maxDepth: number;
  /** Largest JSON text of one entry, in UTF-8 bytes. */
  maxBytes: number;
}

const NATIVE_STRINGIFY_DEPTH = 1000;

export const DEFAULT_ENTRY_LIMITS: EntryLimits = {
  maxDepth: defaultOf('sync', 'maxEntryDepth'),
  maxBytes: defaultOf('sync', 'maxEntryBytes'),
};

/**
 * The first top-level field whose value nests deeper than `maxDepth` (the entry being depth 1), or
 * null; and whether a number kept as its text sits in the entry. Iterative: an entry nested 100,000
 * levels deep must fail here, not overflow the stack in the schema check, in JSON.stringify or
 * later in a serializer.
 */
function walkEntry(entry: unknown, maxDepth: number): { deepField: string | null; kept: boolean } {
  let kept = false;
  if (entry === null || typeof entry !== 'object') return { deepField: null, kept };
  for (const [field, value] of Object.entries(entry)) {
    // Most fields are strings: no stack for them.
    if (value === null || typeof value !== 'object') continue;
    const stack: [unknown, number][] = [[value, 2]];
    while (stack.length > 0) {
      const [node, depth] = stack.pop() ?? [null, 0];
      if (node === null || typeof node !== 'object') continue;
      // A kept number is a scalar of the entry, not a level of nesting.
      if (isLosslessNumber(node)) {
        kept = true;
        continue;
      }
      if (depth > maxDepth) return { deepField: field, kept };
      for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
    }
  }
  return { deepField: null, kept };
}

type Issue = z.core.$ZodIssue;

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    out += typeof key === 'number' ? `[${key}]` : `${out === '' ? '' : '.'}${String(key)}`;
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): { present: boolean; value: unknown } {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) {
      return { present: false, value: undefined };
    }
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { present: true, value: current };
}

/** A number kept as the text the upstream wrote (lossless-json's LosslessNumber, duck-typed). */
function numberText(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const { isLosslessNumber, value: text } = value as { isLosslessNumber?: unknown; value?: unknown };
  return isLosslessNumber === true && typeof text === 'string' ? text : null;
}

/**
 * The value the upstream sent, for a message. JSON.stringify writes a number past a double's range
 * (`1e400`, parsed as Infinity) as `null`, which names a value nobody sent: such a number is named
 * by its text when the parser kept it, else said to be out of range.
 */
function shownValue(value: unknown): string {
  const text = numberText(value);
  if (text !== null) return text.length > 120 ? `${text.slice(0, 120)}… (${text.length} chars)` : text;
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return `a number too large for a double (read as ${value})`;
  }
  return truncateForMessage(value);
}

/** "field "show_image": expected boolean, received "yes"" — our words, the upstream's value. */
function describeIssue(issue: Issue, root: unknown): { field: string; text: string; received: string } {
  const field = formatPath(issue.path);
  const { present, value } = valueAt(root, issue.path);
  const overflow = typeof value === 'number' && !Number.isFinite(value);
  const expected = overflow ? 'a finite number' : issue.code === 'invalid_type' ? issue.expected : null;
  const expectation = expected !== null ? `expected ${expected}` : issue.message;
  const received = present ? shownValue(value) : 'nothing (field missing)';
  const subject = field === '' ? '' : `field "${field}": `;
  return { field, text: `${subject}${expectation}, received ${received}`, received };
}

function uuidLabel(raw: unknown): string {
  const uuid = valueAt(raw, ['uuid']);
  return uuid.present ? ` (uuid ${truncateForMessage(uuid.value, 40)})` : '';
}

function schemaError(
  message: string,
  details: Record<string, unknown>,
  issues: readonly Issue[],
): MirrorError {
  return new MirrorError('UPSTREAM_SCHEMA', message, { ...details, issueCount: issues.length });
}

function validateEnvelope(body: unknown, page: number) {
  const parsed = pageEnvelopeSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const described = first ? describeIssue(first, body) : { field: '', text: 'invalid', received: '' };
  throw schemaError(
    `page ${page}: envelope ${described.text}`,
    { page, field: described.field, received: described.received },
    parsed.error.issues,
  );
}

function boundsError(raw: unknown, page: number, index: number, field: string, what: string): MirrorError {
  const uuid = valueAt(raw, ['uuid']);
  return new MirrorError(
    'UPSTREAM_SCHEMA',
    `page ${page}, entry ${index}${uuidLabel(raw)}: field "${field}" ${what}; nothing was stored`,
    { page, index, field, ...(uuid.present ? { uuid: truncateForMessage(uuid.value, 40) } : {}) },
  );
}

/** Depth first (iteratively), then the size of the text that would be stored. */
function checkBounds(raw: unknown, page: number, index: number, limits: EntryLimits): string {
  const { deepField: deep, kept } = walkEntry(raw, limits.maxDepth);
  if (deep !== null) {
    throw boundsError(
      raw,
      page,
      index,
      deep,
      `nests deeper than ${limits.maxDepth} levels (SYNC_MAX_ENTRY_DEPTH)`,
    );
  }
  // Native stringify recurses; within the configurable depth range (at most 1000) it is safe. It
  // cannot write a kept number's text, which only the project's own writer does.
  const json = limits.maxDepth <= NATIVE_STRINGIFY_DEPTH && !kept ? JSON.stringify(raw) : stringifyJson(raw);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > limits.maxBytes) {
    const largest = largestField(raw);
    throw boundsError(
      raw,
      page,
      index,
      largest,
      `makes the entry ${bytes} bytes, more than the ${limits.maxBytes}-byte cap (SYNC_MAX_ENTRY_BYTES)`,
    );
  }
  return json;
}

function largestField(raw: unknown): string {
  let best = '';
  let bestSize = -1;
  if (raw === null || typeof raw !== 'object') return best;
  for (const [field, value] of Object.entries(raw)) {
    const size = stringifyJson(value).length;
    if (size > bestSize) [best, bestSize] = [field, size];
  }
  return best;
}

function validateEntry(raw: unknown, page: number, index: number): string {
  const parsed = coworkerSchema.safeParse(raw);
  if (parsed.success) return parsed.data.uuid;
  const first = parsed.error.issues[0];
  const described = first ? describeIssue(first, raw) : { field: '', text: 'invalid', received: '' };
  const uuid = valueAt(raw, ['uuid']);
  throw schemaError(
    `page ${page}, entry ${index}${uuidLabel(raw)}: ${described.text}`,
    {
      page,
      index,
      field: described.field,
      received: described.received,
      ...(uuid.present ? { uuid: truncateForMessage(uuid.value, 40) } : {}),
    },
    parsed.error.issues,
  );
}

/**
 * Validates one parsed page body: the envelope, then every entry, failing with UPSTREAM_SCHEMA on
 * the first bad entry (page, 0-based entry index, field path and value in the message).
 */
export function validatePage(
  body: unknown,
  page: number,
  limits: EntryLimits = DEFAULT_ENTRY_LIMITS,
): ValidatedPage {
  const envelope = validateEnvelope(body, page);
  const entries: ValidatedEntry[] = [];
  const unknownFields: UnknownField[] = [];
  const seen = new Set<string>();
  envelope.results.forEach((raw, index) => {
    const json = checkBounds(raw, page, index, limits);
    const uuid = validateEntry(raw, page, index);
    // Schema-valid means a plain object; its own keys beyond the contract are drift to report.
    for (const key of Object.keys(raw as object)) {
      if (KNOWN_FIELDS.has(key)) continue;
      // A field's name is stored as text of its own (a change names it), and PostgreSQL's text
      // holds no U+0000: refused on every store, so both keep the same history.
      if (key.includes('\u0000')) {
        throw boundsError(
          raw,
          page,
          index,
          key,
          'has U+0000 (NUL) in its name, which no field name may hold',
        );
      }
      if (!seen.has(key)) {
        seen.add(key);
        unknownFields.push({ field: key, page, index });
      }
    }
    entries.push({ index, uuid, json });
  });
  const unknownEnvelopeFields = Object.keys(envelope).filter((key) => !ENVELOPE_FIELDS.has(key));
  return {
    page,
    count: envelope.count,
    next: envelope.next,
    previous: envelope.previous,
    entries,
    unknownFields,
    unknownEnvelopeFields,
  };
}
