import type { CurrentListing, RemovedAppearance } from '../db/run-commit.js';
import type { Store } from '../db/store.js';
import { MirrorError } from '../errors.js';
import { bodyHash } from './body-hash.js';
import type { CurrentAppearance, ListingEntry } from './diff.js';

export interface CurrentState extends CurrentListing {
  /** The stored text of a version the diff asks for (only versions that changed or left). */
  bodyOf: (versionId: number) => string;
  /** The removed appearances of one uuid (the last state of each slot no longer listed). */
  removedOf: (uuid: string) => CurrentAppearance[];
}

/**
 * Reads what is current, and up front the stored texts the diff can ask for: those of appearances
 * whose text is in no entry of the new listing, and the removed appearances of the uuids that may
 * return. Any other appearance's text is byte for byte the new entry with its hash, so it is taken
 * from the listing instead of read: an unchanged run reads no body, and the diff never waits on
 * the store.
 */
export async function loadCurrentState(
  store: Store,
  listing: readonly ListingEntry[],
): Promise<CurrentState> {
  const current = await store.currentListing(bodyHash);
  const listed = new Set(listing.map((entry) => entry.hash));
  const missing = current.appearances.filter((a) => !listed.has(a.hash)).map((a) => a.versionId);
  const texts = await store.versionBodies(missing);
  const read = new Map(missing.map((id, i) => [id, texts[i]]));
  const removed = await removedByUuid(store, current, listing);
  for (const appearances of removed.values()) for (const r of appearances) read.set(r.versionId, r.body);
  let byListing: ((versionId: number) => string | undefined) | undefined;
  const fromListing = () => {
    const hashOf = new Map(current.appearances.map((a) => [a.versionId, a.hash]));
    const textOf = new Map(listing.map((entry) => [entry.hash, entry.json]));
    return (versionId: number) => textOf.get(hashOf.get(versionId) ?? '');
  };
  const bodyOf = (versionId: number): string => {
    const text = read.get(versionId) ?? (byListing ??= fromListing())(versionId);
    if (text === undefined) {
      throw new MirrorError('UNEXPECTED', `version ${versionId} is not part of the current listing`, {
        versionId,
      });
    }
    return text;
  };
  return { ...current, bodyOf, removedOf: (uuid) => removed.get(uuid) ?? [] };
}

/**
 * The removed appearances of the known uuids that may take one back: those listed more often than
 * held, or with a state none of their current appearances has (a wholly removed coworker has
 * none). An unchanged run asks for nothing.
 */
async function removedByUuid(
  store: Store,
  current: CurrentListing,
  listing: readonly ListingEntry[],
): Promise<Map<string, RemovedAppearance[]>> {
  const held = new Set(current.appearances.map((a) => `${a.uuid}\u0000${a.hash}`));
  const candidates = new Set<string>();
  // Listed more often than held: an extra appearance, maybe the copy of one that came back.
  const count = new Map<string, number>();
  for (const a of current.appearances) count.set(a.uuid, (count.get(a.uuid) ?? 0) - 1);
  for (const entry of listing) count.set(entry.uuid, (count.get(entry.uuid) ?? 0) + 1);
  for (const [uuid, more] of count) if (more > 0 && current.known.has(uuid)) candidates.add(uuid);
  for (const entry of listing) {
    if (current.known.has(entry.uuid) && !held.has(`${entry.uuid}\u0000${entry.hash}`))
      candidates.add(entry.uuid);
  }
  const uuids = [...candidates].map((uuid) => [uuid] as const);
  const byUuid = new Map<string, RemovedAppearance[]>();
  if (uuids.length === 0) return byUuid;
  for (const r of await store.removedAppearances(
    uuids.map(([uuid]) => uuid),
    bodyHash,
  )) {
    const list = byUuid.get(r.uuid);
    if (list) list.push(r);
    else byUuid.set(r.uuid, [r]);
  }
  return byUuid;
}
