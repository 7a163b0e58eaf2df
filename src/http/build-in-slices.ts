import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { MirrorDatabase } from '../db/open.js';
import type { RunRow } from '../db/schema.js';
import { snapshotSource, type SnapshotSource } from '../db/sqlite/listing.js';
import { MirrorError } from '../errors.js';
import type { JsonValue } from '../drf/python-json.js';
import { snapshotOptions, snapshotPage, snapshotPages, type PreparedSnapshot } from '../drf/snapshot.js';

/** Longest stretch of work between two yields: requests wait at most about this long. */
const SLICE_MS = 4;

/** Everything of a run's snapshot but its pages. */
export function snapshotFrame(
  run: RunRow,
  count: number,
  optionsBody: string | null,
): Omit<PreparedSnapshot, 'pageTails' | 'entryValues'> {
  const pageSize = run.pageSize ?? 8;
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

/** The stored texts of positions [from, to) of the source's listing. */
export function sourceTexts(source: SnapshotSource, from: number, to: number): string[] {
  const texts: string[] = [];
  for (let i = from; i < to; i++) {
    const text = source.bodyOf(source.versionIds[i] ?? -1);
    if (text === undefined) throw new MirrorError('SNAPSHOT_INVALID', 'a listed version is missing', { i });
    texts.push(text);
  }
  return texts;
}

/** The build of a whole snapshot, one page per step: the callers decide when to pause. */
function* snapshotSteps(run: RunRow, source: SnapshotSource): Generator<void, PreparedSnapshot> {
  const frame = snapshotFrame(run, source.versionIds.length, source.optionsBody);
  const { count, pageSize, numPages } = frame;
  const pageTails: Buffer[] = [];
  const entryValues: JsonValue[] = new Array<JsonValue>(count);
  for (let page = 0; page < numPages; page++) {
    const from = page * pageSize;
    const built = snapshotPage(sourceTexts(source, from, Math.min(count, from + pageSize)), from);
    pageTails.push(built.tail);
    built.values.forEach((value, i) => (entryValues[from + i] = value));
    yield;
  }
  return { ...frame, pageTails, entryValues };
}

/** The snapshot of `run`, built at once (start-up, tests). */
export function buildSnapshot(store: MirrorDatabase, run: RunRow): PreparedSnapshot {
  const steps = snapshotSteps(run, snapshotSource(store, run));
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Builds the snapshot of `run` exactly as `buildSnapshot` does, but in slices of a few
 * milliseconds with the event loop free between them: at 100,000 entries the whole build is
 * seconds of CPU, which done at once froze every request, health checks included, at each swap.
 * The run's rows cannot change under it (later runs only close rows past `run`), so the slices
 * add up to one consistent listing.
 */
export async function buildSnapshotInSlices(store: MirrorDatabase, run: RunRow): Promise<PreparedSnapshot> {
  const steps = snapshotSteps(run, snapshotSource(store, run));
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart < SLICE_MS) continue;
    await yieldToEventLoop();
    sliceStart = performance.now();
  }
}
