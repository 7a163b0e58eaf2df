import type { PruneHorizon } from '../db/store.js';
import type { PreparedSnapshot } from '../drf/snapshot.js';

/**
 * A past listing a prune took away: served without the forgotten coworkers, or without the pruned
 * history, it would not be what the upstream listed then, so it is refused (410 Gone) with why.
 */
export interface PrunedListing {
  pruned: PruneHorizon;
}

/** The snapshots the handler serves (the server's SnapshotHolder; a fixed one in tests). */
export interface SnapshotSource {
  readonly current: PreparedSnapshot | null;
  /** The snapshot served at `at` (read from the store: possibly later). */
  asOf(at: Date): PreparedSnapshot | null | PrunedListing | Promise<PreparedSnapshot | null | PrunedListing>;
}
