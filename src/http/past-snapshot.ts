import type { RunRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { snapshotPage, type PreparedSnapshot, type SnapshotPage } from '../drf/snapshot.js';
import { MirrorError } from '../errors.js';
import { snapshotFrame } from './build-in-slices.js';

/**
 * A past snapshot for `?as_of=`, built page by page as pages are asked for. Building all of a
 * 20,000-entry listing at once took ~200 ms of the event loop per past run; here a request pays for
 * one indexed read of the listing's version ids and for the pages it serves (each read from the
 * store asynchronously the first time it is asked for), so a client cycling
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

/**
 * Thrown by a past snapshot's page that is not built yet: the page's texts come from the store,
 * which answers asynchronously. The list endpoint awaits `load()` and answers again; every other
 * reader of a past snapshot goes through it too.
 */
export class PageNotLoaded extends Error {
  readonly load: () => Promise<void>;

  constructor(index: number, load: () => Promise<void>) {
    super(`page ${index + 1} of a past snapshot is not loaded yet`);
    this.name = 'PageNotLoaded';
    this.load = load;
  }
}

export async function loadPastSnapshot(
  store: Store,
  run: RunRow,
  onGrow: (bytes: number) => void,
): Promise<PastSnapshot> {
  const versionIds = await store.listedVersionIds(run.id);
  const optionsBody = run.optionsBodyId === null ? null : await store.optionsBody(run.optionsBodyId);
  const frame = snapshotFrame(run, versionIds.length, optionsBody);
  const { count, pageSize, numPages } = frame;
  const pages = new Map<number, SnapshotPage>();
  const loading = new Map<number, Promise<void>>();
  const state = { bytes: versionIds.byteLength };

  const build = async (index: number): Promise<void> => {
    const from = index * pageSize;
    const texts = await store.versionBodies(versionIds.subarray(from, Math.min(count, from + pageSize)));
    if (pages.has(index)) return;
    const present = texts.map((text, i) => {
      if (text === undefined) {
        throw new MirrorError('SNAPSHOT_INVALID', 'a listed version is missing', { i: from + i });
      }
      return text;
    });
    const built = snapshotPage(present, from);
    pages.set(index, built);
    const grown = built.tail.length * (1 + PARSED_FACTOR);
    state.bytes += grown;
    onGrow(grown);
  };
  const load = (index: number): Promise<void> => {
    let pending = loading.get(index);
    if (!pending) {
      pending = build(index).finally(() => loading.delete(index));
      loading.set(index, pending);
    }
    return pending;
  };
  const page = (index: number): SnapshotPage => {
    const built = pages.get(index);
    if (built) return built;
    throw new PageNotLoaded(index, () => load(index));
  };

  const prepared: PreparedSnapshot = {
    ...frame,
    pageTails: lazyArray(numPages, (i) => page(i).tail),
    entryValues: lazyArray(count, (i) => page(Math.floor(i / pageSize)).values[i % pageSize] ?? null),
  };
  return {
    prepared,
    get bytes() {
      return state.bytes;
    },
  };
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
