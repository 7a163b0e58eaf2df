import { closest, distance } from 'fastest-levenshtein';

/** One unknown variable that looks meant for coworker-mirror, and the known name it most resembles. */
export interface UnknownVariable {
  name: string;
  suggestion: string;
}

/**
 * A name cut in three: two edits change two pieces at most, so a name within two edits of it holds
 * the third whole. A name too short for three pieces gives none (every name may be near it).
 */
function piecesOf(name: string): string[] | undefined {
  if (name.length < 3) return undefined;
  const size = Math.floor(name.length / 3);
  return [name.slice(0, size), name.slice(size, 2 * size), name.slice(2 * size)];
}

/**
 * Finds environment variables that are probably misspelt settings: any unknown name under a prefix
 * the project owns (`UPSTREAM_*`, `SYNC_*`, …), or within a typo or two of a known name. A typo in
 * `UPSTREAM_URL` otherwise starts the demo without a word, which is how a mirror of nothing ships.
 */
export function findUnknownVariables(
  env: Readonly<Record<string, string | undefined>>,
  names: { known: readonly string[]; ownedPrefixes: readonly string[] },
): UnknownVariable[] {
  const { known, ownedPrefixes } = names;
  const knownSet = new Set(known);
  const pieces = known.map(piecesOf);
  const found: UnknownVariable[] = [];
  for (const name of Object.keys(env).sort()) {
    if (knownSet.has(name)) continue;
    const upper = name.toUpperCase();
    // A name two edits from another differs from it in length by two at most, and holds one of its
    // three pieces whole: the others cannot be near. Comparing the whole environment against every
    // setting, or even against those of about its length, was a visible part of every command's start.
    const alike = known.filter(
      (k, i) => Math.abs(k.length - upper.length) <= 2 && (pieces[i]?.some((p) => upper.includes(p)) ?? true),
    );
    const nearest = alike.length > 0 ? closest(upper, alike) : undefined;
    // Short names (HOME vs HOST) are one letter apart by chance; only longer ones get two.
    const near = nearest !== undefined && distance(upper, nearest) <= (nearest.length <= 5 ? 1 : 2);
    const owned = ownedPrefixes.some((p) => upper.startsWith(p));
    if (near) found.push({ name, suggestion: nearest });
    else if (owned) found.push({ name, suggestion: closest(upper, [...known]) });
  }
  return found;
}
