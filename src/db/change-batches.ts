import type { ChangeFilter } from './change-filter.js';
import type { ChangeRow } from './schema.js';

/** A change filter for a stream: `limit` caps the whole stream (none: every match). */
export type ChangeStreamFilter = Omit<ChangeFilter, 'limit'> & { limit?: number | undefined };

/** The name (and post) a coworker's appearance had when a change was recorded. */
export interface ChangeSubject {
  name: string;
  post: string;
}

/** One batch of changes with the subject (name and post at its run) of each, by change id. */
export interface SubjectBatch {
  rows: ChangeRow[];
  subjects: Map<number, ChangeSubject>;
}

/** How many rows a batch holds, and the id of its last (oldest). */
export interface BatchEnds {
  count: number;
  lastId: number | undefined;
}

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
