import { closest, distance } from 'fastest-levenshtein';

/** One unknown variable that looks meant for coworker-mirror, and the known name it most resembles. */
export interface UnknownVariable {
  name: string;
  suggestion: string;
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
  const found: UnknownVariable[] = [];
  for (const name of Object.keys(env).sort()) {
    if (knownSet.has(name)) continue;
    const upper = name.toUpperCase();
    const suggestion = closest(upper, [...known]);
    // Short names (HOME vs HOST) are one letter apart by chance; only longer ones get two.
    const near = distance(upper, suggestion) <= (suggestion.length <= 5 ? 1 : 2);
    const owned = ownedPrefixes.some((p) => upper.startsWith(p));
    if (near || owned) found.push({ name, suggestion });
  }
  return found;
}
