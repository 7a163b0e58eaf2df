import type { PruneHorizon } from '../db/store.js';
import { listingHorizon } from '../db/prune.js';

// What pages, the CLI and refusals say of a prune's horizons, one wording for every surface.

/**
 * The horizons in words, the one wording of pages, the CLI and refusals ("History before … was
 * pruned"); null when nothing was pruned.
 */
export function prunedWords(horizon: PruneHorizon): string | null {
  const text = prunedClause(horizon);
  return text === '' ? null : `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function prunedClause({ historyBefore, removedBefore }: PruneHorizon): string {
  return [
    ...(historyBefore === null ? [] : [`history before ${historyBefore} was pruned`]),
    ...(removedBefore === null ? [] : [`coworkers removed by ${removedBefore} were pruned`]),
  ].join(' and ');
}

/** Why the listing as of `at` (before the horizon) is refused, and what to ask for instead. */
export function prunedListingDetail(at: string, horizon: PruneHorizon): string {
  return (
    `The listing as of ${at} is no longer kept: ${prunedClause(horizon)} (coworker-mirror prune). ` +
    `Ask for as_of ${listingHorizon(horizon) ?? at} or later.`
  );
}
