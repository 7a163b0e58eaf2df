import { CONTRACT_PAGE_SIZE } from '../config/settings.js';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { RunRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { MirrorError } from '../errors.js';
import {
  snapshotOptions,
  snapshotPage,
  snapshotPages,
  valuesFromTails,
  type PreparedSnapshot,
} from '../drf/snapshot.js';

/** Longest stretch of work between two yields: requests wait at most about this long. */
const SLICE_MS = 4;

/** Everything of a run's snapshot but its pages. */
export function snapshotFrame(
  run: RunRow,
  count: number,
  optionsBody: string | null,
): Omit<PreparedSnapshot, 'pageTails' | 'entryValues'> {
  const pageSize = run.pageSize ?? CONTRACT_PAGE_SIZE;
  const fetchedAt = new Date(run.finishedAt ?? run.startedAt);
  return {
    id: String(run.id),
    count,
    pageSize,
    numPages: snapshotPages(count, pageSize),
    options: snapshotOptions(optionsBody),
    lastModified: fetchedAt.toUTCString(),
    fetchedAtIso: fetchedAt.toISOString(),
  };
}

/** Texts read from the store per request: a few hundred KB, whatever the listing's size. */
const READ_ENTRIES = 1024;

/**
 * The one build of a run's whole snapshot: texts read from the store in bounded batches, pages
 * built with `snapshotPage`. With `sliced`, the event loop is freed whenever a slice of work passed
 * SLICE_MS, so requests (health checks included) keep being answered while a large listing is
 * prepared. The run's rows cannot change under it (later runs only close rows past `run`), so the
 * batches add up to one consistent listing.
 */
async function buildFromStore(
  store: Store,
  run: RunRow,
  sliced: boolean,
  previous: PreparedSnapshot | null,
): Promise<PreparedSnapshot> {
  const versionIds = await store.listedVersionIds(run.id);
  const optionsBody = run.optionsBodyId === null ? null : await store.optionsBody(run.optionsBodyId);
  const frame = snapshotFrame(run, versionIds.length, optionsBody);
  const { count, pageSize, numPages } = frame;
  const pageTails: Buffer[] = [];
  // Whole pages per read, so a page never spans two reads.
  const perRead = Math.max(1, Math.floor(READ_ENTRIES / pageSize)) * pageSize;
  let sliceStart = performance.now();
  for (let page = 0; page < numPages;) {
    const readFrom = page * pageSize;
    const texts = await store.versionBodies(
      versionIds.subarray(readFrom, Math.min(count, readFrom + perRead)),
    );
    for (let at = 0; at < texts.length || (count === 0 && page === 0); at += pageSize, page++) {
      const pageTexts = texts.slice(at, at + pageSize).map((text, i) => {
        if (text === undefined) {
          throw new MirrorError('SNAPSHOT_INVALID', 'a listed version is missing', { i: readFrom + at + i });
        }
        return text;
      });
      const built = snapshotPage(pageTexts, readFrom + at);
      pageTails.push(sharedTail(built.tail, previous, pageSize, pageTails.length));
      if (!sliced || performance.now() - sliceStart < SLICE_MS) continue;
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
  // Only the page bytes are kept: the values are parsed again where a rendering needs them.
  return { ...frame, pageTails, entryValues: valuesFromTails(pageTails, pageSize, count) };
}

/**
 * The held snapshot's page when it has the same bytes (same page size, same index): the new
 * snapshot then shares it, so swapping in a run that changed a few entries costs those pages, not
 * a second copy of the listing beside the one still served.
 */
function sharedTail(
  tail: Buffer,
  previous: PreparedSnapshot | null,
  pageSize: number,
  index: number,
): Buffer {
  if (previous?.pageSize !== pageSize) return tail;
  const held = previous.pageTails[index];
  return held?.equals(tail) === true ? held : tail;
}

/**
 * The snapshot of `run`, built at once (start-up, a refresh by hand); pages equal to `previous`'s
 * (the snapshot it replaces) are shared with it.
 */
export function buildSnapshot(
  store: Store,
  run: RunRow,
  previous: PreparedSnapshot | null = null,
): Promise<PreparedSnapshot> {
  return buildFromStore(store, run, false, previous);
}

/**
 * Builds the snapshot of `run` exactly as `buildSnapshot` does, but in slices of a few
 * milliseconds with the event loop free between them: at 100,000 entries the whole build is
 * seconds of CPU, which done at once froze every request, health checks included, at each swap.
 */
export function buildSnapshotInSlices(
  store: Store,
  run: RunRow,
  previous: PreparedSnapshot | null = null,
): Promise<PreparedSnapshot> {
  return buildFromStore(store, run, true, previous);
}
