import type { RunRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { lazyArray, snapshotPage, type PreparedSnapshot, type SnapshotPage } from '../drf/snapshot.js';
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
 * which answers asynchronously. The list endpoint awaits `load()` and answers again; a reader of
 * the whole listing (MEDIA_REWRITE's rewriting) awaits `loadAll()`, in batched reads.
 */
export class PageNotLoaded extends Error {
  readonly load: () => Promise<void>;
  readonly loadAll: () => Promise<void>;

  constructor(index: number, loads: { load: () => Promise<void>; loadAll: () => Promise<void> }) {
    super(`page ${index + 1} of a past snapshot is not loaded yet`);
    this.name = 'PageNotLoaded';
    this.load = loads.load;
    this.loadAll = loads.loadAll;
  }
}

/** Texts read from the store at once when every page is wanted: a few hundred KB. */
const READ_ENTRIES = 1024;

/** The pages of a past listing, built from the store's texts as they are asked for. */
function pageLoader(
  store: Store,
  versionIds: Int32Array,
  pageSize: number,
  onBuilt: (page: SnapshotPage) => void,
): (index: number) => SnapshotPage {
  const count = versionIds.length;
  const numPages = Math.max(1, Math.ceil(count / pageSize));
  const pages = new Map<number, SnapshotPage>();
  const loading = new Map<number, Promise<void>>();
  // Reads pages [first, end) in one read and builds those not built meanwhile.
  const fill = async (first: number, end: number): Promise<void> => {
    const from = first * pageSize;
    const texts = await store.versionBodies(versionIds.subarray(from, Math.min(count, end * pageSize)));
    for (let index = first; index < end; index++) {
      if (pages.has(index)) continue;
      const at = (index - first) * pageSize;
      const present = texts.slice(at, at + pageSize).map((text, i) => {
        if (text !== undefined) return text;
        throw new MirrorError('SNAPSHOT_INVALID', 'a listed version is missing', { i: from + at + i });
      });
      const built = snapshotPage(present, index * pageSize);
      pages.set(index, built);
      onBuilt(built);
    }
  };
  const load = (index: number): Promise<void> => {
    let pending = loading.get(index);
    if (!pending) {
      pending = fill(index, index + 1).finally(() => loading.delete(index));
      loading.set(index, pending);
    }
    return pending;
  };
  const perRead = Math.max(1, Math.floor(READ_ENTRIES / pageSize));
  const loadAll = async (): Promise<void> => {
    for (let first = 0; first < numPages; first += perRead)
      await fill(first, Math.min(numPages, first + perRead));
  };
  return (index) => {
    const built = pages.get(index);
    if (built) return built;
    throw new PageNotLoaded(index, { load: () => load(index), loadAll });
  };
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
  const state = { bytes: versionIds.byteLength };
  const page = pageLoader(store, versionIds, pageSize, (built) => {
    const grown = built.tail.length * (1 + PARSED_FACTOR);
    state.bytes += grown;
    onGrow(grown);
  });
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
