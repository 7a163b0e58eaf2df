import { MirrorError } from '../errors.js';
import { defaultOptionsBody } from './metadata.js';
import { pyJsonDumps, type JsonValue } from './python-json.js';
import { resultsTail } from './results-tail.js';
import { parseJson } from '../json/lossless.js';

/** One served version of the listing, as the sync stored it. */
export interface ListSnapshot {
  /** Opaque snapshot id (a run id), used in ETag. */
  id: string;
  /** Each entry as compact JSON text = JSON.stringify(parsedEntry), key order as received. */
  entries: readonly string[];
  /** Page size observed upstream (8 by default). */
  pageSize: number;
  /** Upstream OPTIONS body captured at sync, served verbatim; null → DRF's default metadata. */
  optionsBody: string | null;
  /** When the snapshot's crawl finished. */
  fetchedAt: Date;
}

/** A snapshot with every byte a plain page answer needs computed once, up front. */
export interface PreparedSnapshot {
  readonly id: string;
  readonly count: number;
  readonly pageSize: number;
  /** Django's `num_pages`: at least 1, so an empty listing still has page 1. */
  readonly numPages: number;
  /** Per page (index 0 = page 1): the compact `"results":[...]}` tail, in DRF's JSON bytes. */
  readonly pageTails: readonly Buffer[];
  /** Parsed entries, for the indented and HTML renderings. */
  readonly entryValues: readonly JsonValue[];
  readonly options: { readonly compact: Buffer; readonly value: JsonValue | null };
  readonly lastModified: string;
  readonly fetchedAtIso: string;
}

function parseEntry(text: string, index: number): JsonValue {
  try {
    return parseJson(text) as JsonValue;
  } catch (cause) {
    throw new MirrorError('SNAPSHOT_INVALID', 'snapshot entry is not JSON', { index }, { cause });
  }
}

function parseOptions(body: string): JsonValue | null {
  try {
    return parseJson(body) as JsonValue;
  } catch {
    // Served verbatim anyway; only the indented variant needs the parsed form.
    return null;
  }
}

/** One page of a snapshot: its parsed entries and its compact `"results":[...]}` tail. */
export interface SnapshotPage {
  tail: Buffer;
  values: JsonValue[];
}

/**
 * Builds one page from its entries' stored texts (`firstIndex`: the first one's index in the
 * listing, for errors). The one definition of a snapshot's bytes: every builder, whole, sliced or
 * lazy, assembles its pages with it.
 */
export function snapshotPage(texts: readonly string[], firstIndex: number): SnapshotPage {
  const values = texts.map((text, i) => parseEntry(text, firstIndex + i));
  // Re-serialized, not copied: DRF's bytes differ from JSON.stringify's (U+2028, float repr).
  return { tail: resultsTail(values.map((value) => pyJsonDumps(value))), values };
}

/** Django's page count for `count` entries (at least 1, so an empty listing has page 1). */
export function snapshotPages(count: number, pageSize: number): number {
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
    throw new MirrorError('SNAPSHOT_INVALID', 'page size must be a positive integer', { pageSize });
  }
  return Math.max(1, Math.ceil(count / pageSize));
}

/** The OPTIONS answer: the upstream's own body when one was stored, else DRF's default. */
export function snapshotOptions(optionsBody: string | null): PreparedSnapshot['options'] {
  return {
    compact: Buffer.from(optionsBody ?? pyJsonDumps(defaultOptionsBody())),
    value: optionsBody === null ? defaultOptionsBody() : parseOptions(optionsBody),
  };
}

export function prepareSnapshot(snapshot: ListSnapshot): PreparedSnapshot {
  const { pageSize } = snapshot;
  const count = snapshot.entries.length;
  const numPages = snapshotPages(count, pageSize);
  const pageTails: Buffer[] = [];
  const entryValues: JsonValue[] = [];
  for (let page = 0; page < numPages; page += 1) {
    const built = snapshotPage(
      snapshot.entries.slice(page * pageSize, (page + 1) * pageSize),
      page * pageSize,
    );
    pageTails.push(built.tail);
    for (const value of built.values) entryValues.push(value);
  }
  return {
    id: snapshot.id,
    count,
    pageSize,
    numPages,
    pageTails,
    entryValues,
    options: snapshotOptions(snapshot.optionsBody),
    lastModified: snapshot.fetchedAt.toUTCString(),
    fetchedAtIso: snapshot.fetchedAt.toISOString(),
  };
}
