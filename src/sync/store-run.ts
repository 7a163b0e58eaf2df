import type { CurrentListing } from '../db/run-commit.js';
import type { Store } from '../db/store.js';
import { MirrorError } from '../errors.js';
import { bodyHash } from './body-hash.js';
import type { ListingEntry } from './diff.js';

export interface CurrentState extends CurrentListing {
  /** The stored text of a version the diff asks for (only versions that changed or left). */
  bodyOf: (versionId: number) => string;
}

/**
 * Reads what is current, and up front the stored texts the diff can ask for: those of appearances
 * whose text is in no entry of the new listing. Any other appearance's text is byte for byte the
 * new entry with its hash, so it is taken from the listing instead of read: an unchanged run reads
 * no body, and the diff never waits on the store.
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
  return { ...current, bodyOf };
}
