import type { ChangeFilter } from './queries.js';
import type { ChangeRow } from './schema.js';

/** A change filter for a stream: `limit` caps the whole stream (none: every match). */
export type ChangeStreamFilter = Omit<ChangeFilter, 'limit'> & { limit?: number | undefined };

/**
 * Every change `filter` matches, newest first, as batches of at most `batchSize` rows, each batch
 * one keyset read (`id < last id seen`, never OFFSET: batch N costs what batch 1 costs) through the
 * store's own `listChanges`, so each dialect streams the same way and only one batch is held at a time.
 */
export async function* changeBatches(
  listChanges: (filter: ChangeFilter) => Promise<ChangeRow[]>,
  filter: ChangeStreamFilter,
  batchSize: number,
): AsyncGenerator<ChangeRow[], void, undefined> {
  let remaining = filter.limit ?? Number.POSITIVE_INFINITY;
  let beforeId = filter.beforeId;
  while (remaining > 0) {
    const limit = Math.min(batchSize, remaining);
    const rows = await listChanges({ ...filter, limit, ...(beforeId !== undefined ? { beforeId } : {}) });
    const last = rows.at(-1);
    if (!last) return;
    yield rows;
    if (rows.length < limit) return;
    remaining -= rows.length;
    beforeId = last.id;
  }
}
