import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { MirrorDatabase } from '../db/open.js';
import { CONTRACT_PAGE_SIZE } from '../config/settings.js';
import type { RunRow } from '../db/schema.js';
import { MirrorError } from '../errors.js';
import { pyJsonDumps, type JsonValue } from '../drf/python-json.js';
import type { PreparedSnapshot } from '../drf/snapshot.js';
import { listedVersionIds, snapshotOptions } from './past-snapshot.js';
import { resultsTail } from '../drf/results-tail.js';
import { parseJson } from '../json/lossless.js';

/** Longest stretch of work between two yields: requests wait at most about this long. */
const SLICE_MS = 4;
const CHECK_EVERY = 32;

/**
 * Builds the snapshot of `run` exactly as `prepareSnapshot` would, but in slices of a few
 * milliseconds with the event loop free between them: at 100,000 entries the whole build is
 * seconds of CPU, which done at once froze every request, health checks included, at each swap.
 * The run's rows cannot change under it (later runs only close rows past `run`), so the slices
 * add up to one consistent listing.
 */
export async function buildSnapshotInSlices(store: MirrorDatabase, run: RunRow): Promise<PreparedSnapshot> {
  const versionIds = listedVersionIds(store, run);
  const bodyOf = store.sqlite.prepare('select body from versions where id = ?').pluck();
  const count = versionIds.length;
  const entryValues: JsonValue[] = new Array<JsonValue>(count);
  const entryTexts: string[] = new Array<string>(count);
  let sliceStart = performance.now();
  const maybeYield = async (i: number) => {
    if (i % CHECK_EVERY !== 0 || performance.now() - sliceStart < SLICE_MS) return;
    await yieldToEventLoop();
    sliceStart = performance.now();
  };
  for (let i = 0; i < count; i++) {
    const text = bodyOf.get(versionIds[i]) as string | undefined;
    if (text === undefined) throw new MirrorError('SNAPSHOT_INVALID', 'a listed version is missing', { i });
    const value = parseEntry(text, i);
    entryValues[i] = value;
    entryTexts[i] = pyJsonDumps(value);
    await maybeYield(i + 1);
  }
  const pageSize = run.pageSize ?? CONTRACT_PAGE_SIZE;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
    throw new MirrorError('SNAPSHOT_INVALID', 'page size must be a positive integer', { pageSize });
  }
  const numPages = Math.max(1, Math.ceil(count / pageSize));
  const pageTails: Buffer[] = [];
  for (let page = 0; page < numPages; page++) {
    const slice = entryTexts.slice(page * pageSize, (page + 1) * pageSize);
    pageTails.push(resultsTail(slice));
    await maybeYield(page + 1);
  }
  const fetchedAt = new Date(run.finishedAt ?? run.startedAt);
  return {
    id: String(run.id),
    count,
    pageSize,
    numPages,
    pageTails,
    entryValues,
    options: snapshotOptions(store, run),
    lastModified: fetchedAt.toUTCString(),
    fetchedAtIso: fetchedAt.toISOString(),
  };
}

function parseEntry(text: string, index: number): JsonValue {
  try {
    return parseJson(text) as JsonValue;
  } catch (cause) {
    throw new MirrorError('SNAPSHOT_INVALID', 'snapshot entry is not JSON', { index }, { cause });
  }
}
