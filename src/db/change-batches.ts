import type { BatchEnds, ChangeFilter, ChangeStreamFilter } from './store.js';
import type { ChangeRow } from './schema.js';

/**
 * Every change `filter` matches, newest first, in batches (rows, rows with more, or their export
 * lines) of at most `batchSize` rows, each one keyset `read` (`id < last id seen`, never OFFSET:
 * batch N costs what batch 1 costs), so only one batch is held at a time.
 */
export async function* keysetBatches<B>(
  read: (filter: ChangeFilter) => Promise<B>,
  ends: (batch: B) => BatchEnds,
  filter: ChangeStreamFilter,
  batchSize: number,
): AsyncGenerator<B, void, undefined> {
  let remaining = filter.limit ?? Number.POSITIVE_INFINITY;
  let beforeId = filter.beforeId;
  while (remaining > 0) {
    const limit = Math.min(batchSize, remaining);
    const batch = await read({ ...filter, limit, ...(beforeId !== undefined ? { beforeId } : {}) });
    const { count, lastId } = ends(batch);
    if (count === 0 || lastId === undefined) return;
    yield batch;
    if (count < limit) return;
    remaining -= count;
    beforeId = lastId;
  }
}

/** Where a batch of rows ends, for `keysetBatches`. */
export function rowsEnds(rows: readonly ChangeRow[]): BatchEnds {
  return { count: rows.length, lastId: rows.at(-1)?.id };
}
