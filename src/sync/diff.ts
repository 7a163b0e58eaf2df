import type { RunCounts, StoredAppearance } from '../db/run-commit.js';
import type { ChangeKind } from '../db/schema.js';
import { parseJson } from '../json/lossless.js';
import { canonicalJson, canonicalValue, stringifyJson } from '../json/safe-json.js';
import { pairByFewestChanges, type FieldMap } from './pair-appearances.js';

/** One appearance of a coworker in the listing currently stored, in listing order. */
export type CurrentAppearance = StoredAppearance;

/** One entry of the freshly crawled listing, in listing order. */
export interface ListingEntry {
  uuid: string;
  json: string;
  hash: string;
}

export type Placement =
  | { kind: 'keep'; versionId: number }
  | { kind: 'new'; uuid: string; slot: number; body: string; hash: string; replaces: number | null };

/** One change the diff decides: a field of an appearance, or an appearance added, returned or removed. */
export interface ChangeEvent {
  uuid: string;
  slot: number;
  kind: ChangeKind;
  field: string | null;
  oldValue: string | null;
  newValue: string | null;
}

export type DiffCounts = RunCounts;

export interface DiffResult {
  /** One per listing entry, in listing order. */
  placements: Placement[];
  /** Versions that stop being current: replaced by a new state, or their appearance removed. */
  closedVersionIds: number[];
  events: ChangeEvent[];
  newCoworkers: string[];
  removedCoworkers: string[];
  returnedCoworkers: string[];
  counts: DiffCounts;
}

export interface DiffInput {
  current: readonly CurrentAppearance[];
  /** Every uuid ever stored, true when it is tombstoned (removed and not back). */
  known: ReadonlyMap<string, boolean>;
  listing: readonly ListingEntry[];
  /** The stored text of a version; asked only for versions that changed or left. */
  bodyOf: (versionId: number) => string;
  /**
   * The appearances of a known uuid that were removed and are not back: the last state of each
   * such slot. Asked only for uuids with more appearances now than are matched.
   */
  removedOf?: (uuid: string) => readonly CurrentAppearance[];
}

/** What a uuid's group needs besides its appearances: what is known of the uuid, and stored texts. */
export interface GroupContext {
  /** Whether the uuid was ever stored, and then whether it is tombstoned (removed and not back). */
  known: boolean | undefined;
  /** The stored text of a version; asked only for versions that changed or left. */
  bodyOf: (versionId: number) => string;
  /** The removed appearances of this uuid (the last state of each slot no longer listed). */
  removed: () => readonly CurrentAppearance[];
}

/** One appearance of the new listing: its entry and its index in the listing. */
export interface IndexedEntry {
  entry: ListingEntry;
  index: number;
}

/** Where a group's new appearance goes: a kept version, or a new state in `slot`. */
export type GroupPlacement =
  { kind: 'keep'; versionId: number } | { kind: 'new'; slot: number; replaces: number | null };

/** What one uuid's group gives: placements and events by listing index, removals, closings. */
export interface GroupOutcome {
  placements: [index: number, placement: GroupPlacement][];
  /** Field changes of a changed appearance, at its index. */
  fieldEvents: [index: number, events: ChangeEvent[]][];
  /** Appearances added or returned, at their index: their event's entry is the listing's text. */
  entryEvents: { index: number; slot: number; kind: 'added' | 'returned' }[];
  /** Stored appearances that left, in the order their `removed` events are recorded. */
  removals: CurrentAppearance[];
  /** Versions that stop being current (replaced or removed). */
  closed: number[];
  /** The uuid was never stored before. */
  isNew: boolean;
  /** The uuid was tombstoned and is listed again. */
  returned: boolean;
}

/**
 * One uuid's appearances before and now (each in listing order) → what to store for it. Pure;
 * the group's counts are added to `counts`. Every decision of the diff is made here, so the
 * whole-listing diff and the streaming sync (by groups of uuids) decide alike.
 */
export function diffGroup(
  previous: readonly CurrentAppearance[],
  news: readonly IndexedEntry[],
  ctx: GroupContext,
  counts: DiffCounts,
): GroupOutcome {
  const out: GroupOutcome = {
    placements: [],
    fieldEvents: [],
    entryEvents: [],
    removals: [],
    closed: [],
    isNew: false,
    returned: false,
  };
  const { pairs, unmatchedNew, unmatchedOld } = matchAppearances(previous, news, ctx.bodyOf);
  for (const [prev, next] of pairs) placePair(prev, next, ctx.bodyOf, out, counts);
  placeExtras(
    ctx,
    [...pairs.map(([prev]) => prev.slot), ...unmatchedOld.map((prev) => prev.slot)],
    unmatchedNew,
    out,
    counts,
  );
  for (const prev of unmatchedOld) recordRemoval(prev, out, counts);
  return out;
}

/**
 * Pure: previous state + new listing → what to store. Appearances of one uuid are matched
 * identical-first, then by the fewest changed fields, so a reordering alone is never a change and
 * an edit or a removal is pinned on the appearance it concerns. An appearance that comes back
 * identical to one removed before takes that appearance's place: it returned. The listing whole,
 * over `diffGroup`; the sync diffs by groups of uuids (stream-diff.ts).
 */
export function diffListing(input: DiffInput): DiffResult {
  const previousByUuid = groupBy(input.current, (a) => a.uuid);
  const newIndexesByUuid = groupBy(
    input.listing.map((_entry, index) => index),
    (index) => input.listing[index]?.uuid ?? unreachable(),
  );
  const placements: (Placement | undefined)[] = new Array<Placement | undefined>(input.listing.length);
  const { bodyOf, listing } = input;
  const result: Omit<DiffResult, 'placements'> = {
    closedVersionIds: [],
    events: [],
    newCoworkers: [],
    removedCoworkers: [],
    returnedCoworkers: [],
    counts: { added: 0, changed: 0, removed: 0, returned: 0, unchanged: 0 },
  };
  // Sparse: most entries of a large listing have no event.
  const eventsAt = new Map<number, ChangeEvent[]>();
  const removal = (prev: CurrentAppearance) => removalEvent(prev, bodyOf);

  for (const [uuid, group] of newIndexesByUuid) {
    // Built per uuid and dropped at once: short-lived, unlike one wrapper per entry for the whole diff.
    const news = all(group).map((index): IndexedEntry => ({ entry: listing[index] ?? unreachable(), index }));
    const known = input.known.get(uuid);
    const removedOf = input.removedOf;
    const out = diffGroup(
      all(previousByUuid.get(uuid)),
      news,
      { known, bodyOf, removed: () => (known !== undefined && removedOf ? removedOf(uuid) : []) },
      result.counts,
    );
    for (const [index, p] of out.placements) {
      const entry = listing[index] ?? unreachable();
      placements[index] = p.kind === 'keep' ? p : { ...p, uuid, body: entry.json, hash: entry.hash };
    }
    for (const [index, events] of out.fieldEvents) eventsAt.set(index, events);
    for (const { index, slot, kind } of out.entryEvents) {
      const newValue = (listing[index] ?? unreachable()).json;
      eventsAt.set(index, [{ uuid, slot, kind, field: null, oldValue: null, newValue }]);
    }
    if (out.isNew) result.newCoworkers.push(uuid);
    if (out.returned) result.returnedCoworkers.push(uuid);
    result.closedVersionIds.push(...out.closed);
    result.events.push(...out.removals.map(removal));
  }
  for (const [uuid, previous] of previousByUuid) {
    if (newIndexesByUuid.has(uuid)) continue;
    for (const prev of all(previous)) {
      recordRemoval(prev, { closed: result.closedVersionIds, removals: [] }, result.counts);
      result.events.push(removal(prev));
    }
    result.removedCoworkers.push(uuid);
  }

  // Events in listing order first, then removals (which have no place in the new listing).
  const removals = result.events;
  const placed = [...eventsAt.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, events]) => events);
  result.events = [...placed, ...removals];
  return { placements: placements.map((p) => p ?? unreachable()), ...result };
}

function matchAppearances(
  previous: readonly CurrentAppearance[],
  news: readonly IndexedEntry[],
  bodyOf: (versionId: number) => string,
): {
  pairs: [CurrentAppearance, IndexedEntry][];
  unmatchedNew: IndexedEntry[];
  unmatchedOld: CurrentAppearance[];
} {
  // A uuid new to the listing (or gone from it) pairs nothing: no text is read for it.
  if (previous.length === 0 || news.length === 0) {
    return { pairs: [], unmatchedNew: [...news], unmatchedOld: [...previous] };
  }
  // The common case, a uuid listed once before and once now: no bookkeeping needed.
  if (previous.length === 1 && news.length === 1) {
    const [prev] = previous as [CurrentAppearance];
    const [next] = news as [IndexedEntry];
    return { pairs: [[prev, next]], unmatchedNew: [], unmatchedOld: [] };
  }
  const usedOld = new Set<CurrentAppearance>();
  const matched = new Map<IndexedEntry, CurrentAppearance>();
  matchIdentical(previous, news, bodyOf, usedOld, matched);
  const restOld = previous.filter((p) => !usedOld.has(p));
  const restNew = news.filter((n) => !matched.has(n));
  // What no identical state matched is paired by what it shares (the fewest changed fields in all):
  // an edit is then recorded as the fields it changed, what is left unpaired as removed or added.
  const paired = pairByFewestChanges(
    restOld.map((p) => fieldMap(bodyOf(p.versionId))),
    restNew.map((n) => fieldMap(n.entry.json)),
  );
  for (const [i, j] of paired) matched.set(restNew[j] ?? unreachable(), restOld[i] ?? unreachable());
  const pairedOld = new Set(paired.map(([i]) => i));
  const pairs = news
    .filter((n) => matched.has(n))
    .map((n): [CurrentAppearance, IndexedEntry] => [matched.get(n) ?? unreachable(), n]);
  return {
    pairs,
    unmatchedNew: restNew.filter((n) => !matched.has(n)),
    unmatchedOld: restOld.filter((_p, i) => !pairedOld.has(i)),
  };
}

/**
 * Pairs stored appearances with entries in the very same state: the same text first, then the same
 * fields in another key order, so moving appearances around while the upstream reorders keys is
 * not mistaken for field changes. Each text is canonicalized once, and only when needed.
 */
function matchIdentical(
  olds: readonly CurrentAppearance[],
  news: readonly IndexedEntry[],
  bodyOf: (versionId: number) => string,
  usedOld: Set<CurrentAppearance>,
  matched: Map<IndexedEntry, CurrentAppearance>,
): void {
  matchByKey(
    olds,
    news,
    (p) => p.hash,
    (n) => n.entry.hash,
    usedOld,
    matched,
  );
  if (matched.size >= Math.min(olds.length, news.length)) return;
  matchByKey(
    olds,
    news,
    (p) => canonicalJson(bodyOf(p.versionId)),
    (n) => canonicalJson(n.entry.json),
    usedOld,
    matched,
  );
}

/**
 * Keys the unused old items by a state (queues in listing order), then takes, for each unmatched
 * new item in listing order, the first unused old one with the same key: what a scan of the old
 * list would pick, but linear in the items, not quadratic (a uuid listed 20,000 times must not
 * block the process for minutes).
 */
function matchByKey<O, N>(
  olds: readonly O[],
  news: readonly N[],
  oldKey: (old: O) => string,
  newKey: (next: N) => string,
  usedOld: Set<O>,
  matched: Map<N, O>,
): void {
  const queues = new Map<string, { items: O[]; head: number }>();
  for (const old of olds) {
    if (usedOld.has(old)) continue;
    const key = oldKey(old);
    const queue = queues.get(key);
    if (queue) queue.items.push(old);
    else queues.set(key, { items: [old], head: 0 });
  }
  for (const next of news) {
    if (matched.has(next)) continue;
    const queue = queues.get(newKey(next));
    const same = queue?.items[queue.head];
    if (queue === undefined || same === undefined) continue;
    queue.head++;
    usedOld.add(same);
    matched.set(next, same);
  }
}

/** An entry's top-level fields, each value as canonical JSON text (key order inside ignored). */
function fieldMap(body: string): FieldMap {
  const value = parseJson(body);
  const map = new Map<string, string>();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return map;
  for (const [field, child] of Object.entries(value)) map.set(field, canonicalValue(child));
  return map;
}

function placePair(
  prev: CurrentAppearance,
  { entry: next, index }: IndexedEntry,
  bodyOf: (versionId: number) => string,
  out: GroupOutcome,
  counts: DiffCounts,
): void {
  if (prev.hash === next.hash) {
    counts.unchanged++;
    out.placements.push([index, { kind: 'keep', versionId: prev.versionId }]);
    return;
  }
  const fieldEvents = diffFields(bodyOf(prev.versionId), next.json).map((f): ChangeEvent => ({
    uuid: prev.uuid,
    slot: prev.slot,
    kind: 'changed',
    ...f,
  }));
  if (fieldEvents.length > 0) out.fieldEvents.push([index, fieldEvents]);
  // Key order alone changed: a new stored state (it is served differently) but no field changed.
  if (fieldEvents.length > 0) counts.changed++;
  else counts.unchanged++;
  out.closed.push(prev.versionId);
  out.placements.push([index, { kind: 'new', slot: prev.slot, replaces: prev.versionId }]);
}

/**
 * Appearances beyond the ones matched: each identical to an appearance removed before returns in
 * that appearance's slot; so does the first of a uuid that was wholly removed, whatever its state
 * (the coworker is back). The others are new appearances, in slots never used by this uuid.
 */
function placeExtras(
  ctx: GroupContext,
  /** Slots the uuid's current appearances hold, kept or leaving in this run. */
  heldSlots: readonly number[],
  extras: readonly IndexedEntry[],
  out: GroupOutcome,
  counts: DiffCounts,
): void {
  if (extras.length === 0) return;
  const tombstoned = ctx.known === true;
  out.isNew = ctx.known === undefined;
  out.returned = tombstoned;
  const removed = ctx.known !== undefined ? ctx.removed() : [];
  const returns = matchReturns(removed, extras, tombstoned, ctx.bodyOf);
  // A new appearance never takes a slot with a history: not one held now, not one removed before.
  const usedSlots = new Set([...heldSlots, ...removed.map((r) => r.slot)]);
  // A coworker back after a whole removal has returned, even where its removed slots are unknown.
  const wholeReturn = tombstoned && returns.size === 0 ? extras[0] : undefined;
  let slot = 0;
  for (const extra of extras) {
    const back = returns.get(extra);
    if (back === undefined) {
      while (usedSlots.has(slot)) slot++;
      usedSlots.add(slot);
    }
    const at = back?.slot ?? slot;
    const kind = back === undefined && extra !== wholeReturn ? 'added' : 'returned';
    counts[kind]++;
    out.entryEvents.push({ index: extra.index, slot: at, kind });
    out.placements.push([extra.index, { kind: 'new', slot: at, replaces: null }]);
  }
}

/**
 * Which extra appearance returns in which removed slot: identical states first (by hash, then in
 * any key order); for a uuid that was wholly removed and comes back changed, its first appearance
 * returns in the removed slot it shares the most with.
 */
function matchReturns(
  removed: readonly CurrentAppearance[],
  extras: readonly IndexedEntry[],
  tombstoned: boolean,
  bodyOf: (versionId: number) => string,
): Map<IndexedEntry, CurrentAppearance> {
  const returns = new Map<IndexedEntry, CurrentAppearance>();
  if (removed.length === 0) return returns;
  matchIdentical(removed, extras, bodyOf, new Set<CurrentAppearance>(), returns);
  const first = extras[0];
  if (tombstoned && returns.size === 0 && first) {
    const [pair] = pairByFewestChanges(
      removed.map((r) => fieldMap(bodyOf(r.versionId))),
      [fieldMap(first.entry.json)],
    );
    const slot = pair ? removed[pair[0]] : undefined;
    if (slot) returns.set(first, slot);
  }
  return returns;
}

function removalEvent(prev: CurrentAppearance, bodyOf: (versionId: number) => string): ChangeEvent {
  return {
    uuid: prev.uuid,
    slot: prev.slot,
    kind: 'removed',
    field: null,
    oldValue: bodyOf(prev.versionId),
    newValue: null,
  };
}

function recordRemoval(
  prev: CurrentAppearance,
  out: Pick<GroupOutcome, 'closed' | 'removals'>,
  counts: DiffCounts,
): void {
  counts.removed++;
  out.closed.push(prev.versionId);
  out.removals.push(prev);
}

/** Top-level fields whose JSON differs, in the new entry's key order, then fields that vanished. */
export function diffFields(
  oldBody: string,
  newBody: string,
): { field: string; oldValue: string | null; newValue: string | null }[] {
  const before = parseJson(oldBody) as Record<string, unknown>;
  const after = parseJson(newBody) as Record<string, unknown>;
  const fields = [...Object.keys(after), ...Object.keys(before).filter((k) => !Object.hasOwn(after, k))];
  const out: { field: string; oldValue: string | null; newValue: string | null }[] = [];
  for (const field of fields) {
    const oldValue = Object.hasOwn(before, field) ? stringifyJson(before[field]) : null;
    const newValue = Object.hasOwn(after, field) ? stringifyJson(after[field]) : null;
    if (oldValue !== newValue) out.push({ field, oldValue, newValue });
  }
  return out;
}

/** Items by key; a key seen once keeps its item as is (most uuids are listed once), else an array. */
function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T | T[]> {
  const map = new Map<string, T | T[]>();
  for (const item of items) {
    const k = key(item);
    const found = map.get(k);
    if (found === undefined) map.set(k, item);
    else if (Array.isArray(found)) found.push(item);
    else map.set(k, [found, item]);
  }
  return map;
}

function all<T>(group: T | T[] | undefined): T[] {
  return group === undefined ? [] : Array.isArray(group) ? group : [group];
}

function unreachable(): never {
  throw new Error('diffListing: internal invariant broken');
}
