import type { MirrorDatabase } from '../db/open.js';
import type { RunRow } from '../db/schema.js';
import { snapshotSource } from '../db/sqlite/listing.js';
import { lazyArray, snapshotPage, type PreparedSnapshot, type SnapshotPage } from '../drf/snapshot.js';
import { snapshotFrame, sourceTexts } from './build-in-slices.js';

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
  const source = snapshotSource(store, run);
  const frame = snapshotFrame(run, source.versionIds.length, source.optionsBody);
  const { count, pageSize, numPages } = frame;
  const pages = new Map<number, SnapshotPage>();
  const state = { bytes: source.versionIds.byteLength };

  const page = (index: number): SnapshotPage => {
    let built = pages.get(index);
    if (built) return built;
    const from = index * pageSize;
    built = snapshotPage(sourceTexts(source, from, Math.min(count, from + pageSize)), from);
    pages.set(index, built);
    const grown = built.tail.length * (1 + PARSED_FACTOR);
    state.bytes += grown;
    onGrow(grown);
    return built;
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
