import type {
  RunCounts,
  RunStage,
  StageChunk,
  StagedEvent,
  StagedHeld,
  StagedNew,
  StageOutcome,
} from '../db/run-commit.js';
import type { Store } from '../db/store.js';
import { MirrorError } from '../errors.js';
import { bodyHash } from './body-hash.js';
import { diffGroup, type CurrentAppearance, type IndexedEntry, type ListingEntry } from './diff.js';

/** Rows of each side (staged listing, current listing) read per chunk of uuid groups. */
const CHUNK_ROWS = 2_000;

/** The ordering key's phases: today's order of a run's changes (see diffListing). */
const LISTED = 0;
const REMOVED_LISTED = 1;
const REMOVED_GONE = 2;

/**
 * Diffs the staged listing against the current one and records the outcome in the stage. A store
 * that never held a coworker (a first sync) can only add: the stage decides that set-based
 * (`RunStage.recordFirstListing`); any other goes by uuid groups (`diffStagedGroups`).
 */
export async function diffStaged(stage: RunStage, store: Store, signal?: AbortSignal): Promise<RunCounts> {
  signal?.throwIfAborted();
  const added = await stage.recordFirstListing();
  if (added !== null) return { added, changed: 0, removed: 0, returned: 0, unchanged: 0 };
  return diffStagedGroups(stage, store, signal);
}

/**
 * The diff by chunks of whole uuid groups (keyset on uuid), each group by `diffGroup`, so neither
 * listing is ever held whole; the outcome is recorded in the stage with keys that order
 * placements, changes and coworkers as the whole-listing diff did. Reads stored texts only where a
 * group needs them. Whatever the store holds (the tests compare it with the set-based first diff).
 */
export async function diffStagedGroups(
  stage: RunStage,
  store: Store,
  signal?: AbortSignal,
): Promise<RunCounts> {
  const counts: RunCounts = { added: 0, changed: 0, removed: 0, returned: 0, unchanged: 0 };
  let after = '';
  for (;;) {
    signal?.throwIfAborted();
    const chunk = await stage.chunk(after, CHUNK_ROWS);
    await stage.record(await diffChunk(chunk, stage, store, counts));
    if (chunk.last === null) return counts;
    after = chunk.last;
  }
}

interface Group {
  uuid: string;
  news: StagedNew[];
  held: StagedHeld[];
}

function groupsOf(chunk: StageChunk): Group[] {
  const byUuid = new Map<string, Group>();
  const group = (uuid: string): Group => {
    let found = byUuid.get(uuid);
    if (!found) byUuid.set(uuid, (found = { uuid, news: [], held: [] }));
    return found;
  };
  for (const entry of chunk.news) group(entry.uuid).news.push(entry);
  for (const held of chunk.held) group(held.uuid).held.push(held);
  return [...byUuid.values()];
}

/** A group that needs no stored text: listed once and held once in the same state, or never seen. */
function needsNoText(group: Group, known: boolean | undefined): boolean {
  const [held] = group.held;
  const [entry] = group.news;
  if (group.held.length === 1 && group.news.length === 1) return held?.hash === entry?.hash;
  return group.held.length === 0 && known === undefined;
}

/**
 * Whether a known uuid may take back a removed appearance: listed more often than held, or in a
 * state none of its held appearances has (a wholly removed coworker holds none).
 */
function mayReturn(group: Group, known: boolean | undefined): boolean {
  if (known === undefined || group.news.length === 0) return false;
  if (group.news.length > group.held.length) return true;
  const held = new Set(group.held.map((h) => h.hash));
  return group.news.some((n) => !held.has(n.hash));
}

/** The stored and staged texts the chunk's groups need, read in a few statements. */
async function textsFor(
  groups: readonly Group[],
  chunk: StageChunk,
  stage: RunStage,
  store: Store,
): Promise<{
  entries: Map<number, string>;
  versions: Map<number, string>;
  removed: Map<string, CurrentAppearance[]>;
}> {
  const heavy = groups.filter((g) => !needsNoText(g, chunk.known.get(g.uuid)));
  const entries = await stage.entryTexts(heavy.flatMap((g) => g.news.map((n) => n.position)));
  const ids = heavy.flatMap((g) => g.held.map((h) => h.versionId));
  const bodies = await store.versionBodies(ids);
  const versions = new Map<number, string>();
  ids.forEach((id, i) => {
    const body = bodies[i];
    if (body !== undefined) versions.set(id, body);
  });
  const removed = new Map<string, CurrentAppearance[]>();
  const returning = heavy.filter((g) => mayReturn(g, chunk.known.get(g.uuid))).map((g) => g.uuid);
  if (returning.length > 0) {
    for (const r of await store.removedAppearances(returning, bodyHash)) {
      versions.set(r.versionId, r.body);
      const list = removed.get(r.uuid) ?? [];
      list.push({ versionId: r.versionId, uuid: r.uuid, slot: r.slot, hash: r.hash });
      removed.set(r.uuid, list);
    }
  }
  return { entries, versions, removed };
}

/** A staged entry whose text is read only for the groups that need it. */
class StagedListingEntry implements ListingEntry {
  constructor(
    readonly uuid: string,
    readonly hash: string,
    private readonly text: string | undefined,
  ) {}

  get json(): string {
    if (this.text === undefined) throw unexpected(`the text of an entry of ${this.uuid} was not read`);
    return this.text;
  }
}

function unexpected(message: string): MirrorError {
  return new MirrorError('UNEXPECTED', `streaming diff: ${message}`, {});
}

async function diffChunk(
  chunk: StageChunk,
  stage: RunStage,
  store: Store,
  counts: RunCounts,
): Promise<StageOutcome> {
  const groups = groupsOf(chunk);
  const texts = await textsFor(groups, chunk, stage, store);
  const bodyOf = (versionId: number): string => {
    const body = texts.versions.get(versionId);
    if (body === undefined) throw unexpected(`version ${versionId} was not read`);
    return body;
  };
  const outcome: StageOutcome = { places: [], closed: [], events: [], coworkers: [] };
  for (const group of groups) {
    const known = chunk.known.get(group.uuid);
    if (group.news.length === 0) recordGone(group, outcome, counts);
    else
      diffListed(
        group,
        { known, bodyOf, removed: () => texts.removed.get(group.uuid) ?? [] },
        texts.entries,
        outcome,
        counts,
      );
  }
  return outcome;
}

function appearanceOf(held: StagedHeld): CurrentAppearance {
  return { versionId: held.versionId, uuid: held.uuid, slot: held.slot, hash: held.hash };
}

function diffListed(
  group: Group,
  ctx: Parameters<typeof diffGroup>[2],
  entryTexts: ReadonlyMap<number, string>,
  outcome: StageOutcome,
  counts: RunCounts,
): void {
  const { uuid } = group;
  const firstIndex = group.news[0]?.position ?? 0;
  const news = group.news.map((n): IndexedEntry => ({
    entry: new StagedListingEntry(uuid, n.hash, entryTexts.get(n.position)),
    index: n.position,
  }));
  const out = diffGroup(group.held.map(appearanceOf), news, ctx, counts);
  for (const [index, p] of out.placements) {
    outcome.places.push(p.kind === 'keep' ? [index, p.versionId, null, null] : [index, null, uuid, p.slot]);
  }
  for (const [index, events] of out.fieldEvents) {
    events.forEach((e, seq) =>
      outcome.events.push({ ...e, order: [LISTED, index, seq], refPosition: null, refVersion: null }),
    );
  }
  for (const { index, slot, kind } of out.entryEvents) {
    outcome.events.push(entryEvent(uuid, slot, kind, [LISTED, index, 0], index, null));
  }
  out.removals.forEach((prev, seq) => {
    outcome.events.push(
      entryEvent(uuid, prev.slot, 'removed', [REMOVED_LISTED, firstIndex, seq], null, prev.versionId),
    );
  });
  outcome.closed.push(...out.closed);
  if (out.isNew) outcome.coworkers.push([uuid, 'new', firstIndex]);
  if (out.returned) outcome.coworkers.push([uuid, 'returned', firstIndex]);
}

/** A uuid no longer listed: every appearance removed, the coworker with them. */
function recordGone(group: Group, outcome: StageOutcome, counts: RunCounts): void {
  const first = group.held[0]?.position ?? 0;
  group.held.forEach((held, seq) => {
    counts.removed++;
    outcome.closed.push(held.versionId);
    outcome.events.push(
      entryEvent(group.uuid, held.slot, 'removed', [REMOVED_GONE, first, seq], null, held.versionId),
    );
  });
  outcome.coworkers.push([group.uuid, 'removed', first]);
}

/** An added, returned or removed change: its entry is a version's body, referred to, never copied. */
function entryEvent(
  uuid: string,
  slot: number,
  kind: 'added' | 'returned' | 'removed',
  order: StagedEvent['order'],
  refPosition: number | null,
  refVersion: number | null,
): StagedEvent {
  return { order, uuid, slot, kind, field: null, oldValue: null, newValue: null, refPosition, refVersion };
}
