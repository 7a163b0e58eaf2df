import type { RunRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { lazyArray, snapshotPage, valuesFromTails, type PreparedSnapshot } from '../drf/snapshot.js';
import { MirrorError } from '../errors.js';
import { snapshotFrame } from './build-in-slices.js';

/**
 * A past snapshot for `?as_of=`, built page by page as pages are asked for. Building all of a
 * listing at once held the event loop for a time that grew with the listing, per past run; here a
 * request pays for one indexed read of the listing's version ids and for the pages it serves (each
 * read from the store asynchronously the first time it is asked for), so a client cycling through
 * past runs cannot starve the health check. Its `bytes` grow as pages are built; the holder
 * reads them to keep the cache within its budget.
 */
export interface PastSnapshot {
  readonly prepared: PreparedSnapshot;
  /** Approximate memory held: version ids, and each page built (its bytes). */
  readonly bytes: number;
}

/** A built page's Buffer object and map entry, about the same whatever its length (rounded up). */
const PAGE_OBJECT_BYTES = 256;

/**
 * What a built page holds: its bytes, rounded up to its share of the Buffer pool's 8 KiB slab when
 * it is small enough to be pooled (a page of small entries leaves part of its slab unused), and its
 * objects. Counting the bytes alone fell well short of what the heap holds.
 */
function pageCost(tail: Buffer): number {
  const slab = Buffer.poolSize;
  if (tail.length >= slab >>> 1) return tail.length + PAGE_OBJECT_BYTES;
  const aligned = Math.ceil(tail.length / 8) * 8;
  return slab / Math.floor(slab / aligned) + PAGE_OBJECT_BYTES;
}

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

/**
 * The pages of a past listing, built from the store's texts as they are asked for. Only each page's
 * bytes are kept, as the current snapshot keeps them: the parsed entries cost several times their text.
 */
function pageLoader(
  store: Store,
  versionIds: Int32Array,
  pageSize: number,
  onBuilt: (tail: Buffer) => void,
): (index: number) => Buffer {
  const count = versionIds.length;
  const numPages = Math.max(1, Math.ceil(count / pageSize));
  const pages = new Map<number, Buffer>();
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
      const { tail } = snapshotPage(present, index * pageSize);
      pages.set(index, tail);
      onBuilt(tail);
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
  const page = pageLoader(store, versionIds, pageSize, (tail) => {
    const grown = pageCost(tail);
    state.bytes += grown;
    onGrow(grown);
  });
  const pageTails = lazyArray(numPages, page);
  // A page not loaded yet throws PageNotLoaded from here too, as from pageTails.
  const prepared: PreparedSnapshot = {
    ...frame,
    pageTails,
    entryValues: valuesFromTails(pageTails, pageSize, count),
  };
  return {
    prepared,
    get bytes() {
      return state.bytes;
    },
  };
}
