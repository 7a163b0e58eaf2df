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
  /**
   * The entries' values, for the indented and HTML renderings: parsed on demand from their page's
   * bytes (`valuesFromTails`), never held, so a snapshot costs about its wire bytes.
   */
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
  for (let page = 0; page < numPages; page += 1) {
    const texts = snapshot.entries.slice(page * pageSize, (page + 1) * pageSize);
    pageTails.push(snapshotPage(texts, page * pageSize).tail);
  }
  return {
    id: snapshot.id,
    count,
    pageSize,
    numPages,
    pageTails,
    entryValues: valuesFromTails(pageTails, pageSize, count),
    options: snapshotOptions(snapshot.optionsBody),
    lastModified: snapshot.fetchedAt.toUTCString(),
    fetchedAtIso: snapshot.fetchedAt.toISOString(),
  };
}

/** A page's values read back from its `"results":[...]}` bytes (DRF's JSON parses to the same values). */
function tailValues(tail: Buffer, firstIndex: number): JsonValue[] {
  const parsed = parseEntry(`{${tail.toString('utf8')}`, firstIndex) as { results?: JsonValue[] };
  return parsed.results ?? [];
}

/**
 * The entries of a snapshot as a lazy array over its page bytes: an entry is parsed when read, its
 * page at once, and only the last page read is kept (a rendering reads one page in order). The
 * parsed form costs several times the text; holding it for every entry made a served snapshot
 * several times its bytes.
 */
export function valuesFromTails(
  pageTails: readonly Buffer[],
  pageSize: number,
  count: number,
): readonly JsonValue[] {
  let cached: { page: number; values: JsonValue[] } | null = null;
  return lazyArray(count, (index) => {
    const page = Math.floor(index / pageSize);
    if (cached?.page !== page) {
      cached = { page, values: tailValues(pageTails[page] ?? Buffer.from('"results":[]}'), page * pageSize) };
    }
    return cached.values[index % pageSize] ?? null;
  });
}

/**
 * A read-only array whose items are computed on first read: indexing, `length` and the generic
 * array methods (`slice`, `map`, spreading) work as on a real array.
 */
export function lazyArray<T>(length: number, item: (index: number) => T): readonly T[] {
  const isIndex = (key: string | symbol): key is string =>
    typeof key === 'string' && /^(0|[1-9]\d*)$/.test(key) && Number(key) < length;
  return new Proxy(new Array<T>(length), {
    get(target, key, receiver) {
      if (isIndex(key)) return item(Number(key));
      return Reflect.get(target, key, receiver) as unknown;
    },
    has(target, key) {
      return isIndex(key) || Reflect.has(target, key);
    },
    set() {
      return false;
    },
  });
}
