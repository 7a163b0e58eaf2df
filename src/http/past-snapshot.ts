import type { MirrorDatabase } from '../db/open.js';
import { CONTRACT_PAGE_SIZE } from '../config/settings.js';
import type { RunRow } from '../db/schema.js';
import { MirrorError } from '../errors.js';
import { defaultOptionsBody } from '../drf/metadata.js';
import { pyJsonDumps, type JsonValue } from '../drf/python-json.js';
import type { PreparedSnapshot } from '../drf/snapshot.js';
import { resultsTail } from '../drf/results-tail.js';
import { parseJson } from '../json/lossless.js';

/**
 * A past snapshot for `?as_of=`, built page by page as pages are asked for. Building all of a
 * 20,000-entry listing at once took ~200 ms of the event loop per past run; here a request pays for
 * one indexed read of the listing's version ids and for the pages it serves, so a client cycling
 * through past runs cannot starve the health check. Its `bytes` grow as pages are built; the holder
 * reads them to keep the cache within its budget.
 */
export interface PastSnapshot {
  readonly prepared: PreparedSnapshot;
  /** Approximate memory held: version ids, and each page built (its bytes and parsed entries). */
  readonly bytes: number;
}

/** Parsed entries cost about this many times their JSON text (V8 objects and strings). */
const PARSED_FACTOR = 3;

export function loadPastSnapshot(
  store: MirrorDatabase,
  run: RunRow,
  onGrow: (bytes: number) => void,
): PastSnapshot {
  const versionIds = listedVersionIds(store, run);
  const bodyOf = store.sqlite.prepare('select body from versions where id = ?').pluck();
  const pageSize = run.pageSize ?? CONTRACT_PAGE_SIZE;
  const count = versionIds.length;
  const numPages = Math.max(1, Math.ceil(count / pageSize));
  const pages = new Map<number, { tail: Buffer; values: JsonValue[] }>();
  const state = { bytes: versionIds.byteLength };

  const page = (index: number): { tail: Buffer; values: JsonValue[] } => {
    let built = pages.get(index);
    if (built) return built;
    const values: JsonValue[] = [];
    for (let i = index * pageSize; i < Math.min(count, (index + 1) * pageSize); i++) {
      const text = bodyOf.get(versionIds[i]) as string | undefined;
      if (text === undefined) throw new MirrorError('SNAPSHOT_INVALID', 'a listed version is missing', { i });
      values.push(parseJson(text) as JsonValue);
    }
    const tail = resultsTail(values.map((v) => pyJsonDumps(v)));
    built = { tail, values };
    pages.set(index, built);
    const grown = tail.length * (1 + PARSED_FACTOR);
    state.bytes += grown;
    onGrow(grown);
    return built;
  };

  const fetchedAt = new Date(run.finishedAt ?? run.startedAt);
  const prepared: PreparedSnapshot = {
    id: String(run.id),
    count,
    pageSize,
    numPages,
    pageTails: lazyArray(numPages, (i) => page(i).tail),
    entryValues: lazyArray(count, (i) => page(Math.floor(i / pageSize)).values[i % pageSize] ?? null),
    options: snapshotOptions(store, run),
    lastModified: fetchedAt.toUTCString(),
    fetchedAtIso: fetchedAt.toISOString(),
  };
  return {
    prepared,
    get bytes() {
      return state.bytes;
    },
  };
}

/** The OPTIONS answer of a run: the upstream's own body when it was stored, else DRF's default. */
export function snapshotOptions(store: MirrorDatabase, run: RunRow): PreparedSnapshot['options'] {
  const body = run.optionsBodyId === null ? null : loadOptionsBody(store, run.optionsBodyId);
  return {
    compact: Buffer.from(body ?? pyJsonDumps(defaultOptionsBody())),
    value: body === null ? defaultOptionsBody() : parseOrNull(body),
  };
}

/** The version ids listed by `run`, in listing order: one indexed read of integers. */
export function listedVersionIds(store: MirrorDatabase, run: RunRow): Int32Array {
  return new Int32Array(
    store.sqlite
      .prepare(
        `select lp.version_id from listing_positions lp
          where lp.valid_from_run <= ? and (lp.valid_to_run is null or lp.valid_to_run > ?)
          order by lp.position`,
      )
      .pluck()
      .all(run.id, run.id) as number[],
  );
}

function loadOptionsBody(store: MirrorDatabase, id: number): string | null {
  return (
    (store.sqlite.prepare('select body from options_bodies where id = ?').pluck().get(id) as string) ?? null
  );
}

function parseOrNull(text: string): JsonValue | null {
  try {
    return parseJson(text) as JsonValue;
  } catch {
    return null;
  }
}

/**
 * A read-only array whose items are computed on first read: indexing, `length` and the generic
 * array methods (`slice`) work as on a real array.
 */
function lazyArray<T>(length: number, item: (index: number) => T): readonly T[] {
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
