import type { PruneOutcome, PruneRequest } from '../store.js';
import type pg from 'pg';
import { prune } from '../prune.js';
import { announce } from './commit-watch.js';
import type { PgContext } from './context.js';
import { assertHeld, takeLock } from './runs.js';
import { pgSqlPort, pgTransactionPort } from './sql-port.js';

/** Every table a prune deletes from: what VACUUM then goes through. */
const PRUNED_TABLES = `changes, listing_positions, versions, coworkers, media_versions, media_urls, media_blobs,
  media_blob_chunks, webhook_attempts, webhook_deliveries, webhook_messages`;

/**
 * The prune on PostgreSQL: under the run lock (the caller's, or taken here and refused with
 * SYNC_LOCKED while a sync holds it), in one transaction, the dropped files' bytes included. A
 * deleted row stays in its table's pages as a dead tuple until VACUUM, which runs after the commit
 * (it cannot run inside a transaction) on every table the prune touched.
 */
export async function prunePg(ctx: PgContext, request: PruneRequest): Promise<PruneOutcome> {
  if (request.heldRun !== undefined) assertHeld(ctx, request.heldRun);
  const lock = request.heldRun === undefined ? await takeLock(ctx) : null;
  try {
    return await prune(
      pgSqlPort(ctx.pool),
      request,
      (work) =>
        pgTransactionPort(ctx.pool).write(async (tx) => {
          const done = await work(tx);
          if (done.droppedFiles.length > 0) {
            await tx.run('delete from media_blob_chunks where sha256 = any(?::text[])', [done.droppedFiles]);
          }
          return done;
        }),
      async (work) => {
        // Every instance deletes its cached copies of the dropped files (src/media/blob-cache.ts).
        if (work.droppedFiles.length > 0) await announce(ctx.pool, 'media');
        return work.deleted ? await vacuum(ctx.pool) : null;
      },
    );
  } finally {
    await lock?.release();
  }
}

/** VACUUM of the pruned tables; null when it ran, else why not (the prune itself is committed). */
async function vacuum(pool: pg.Pool): Promise<string | null> {
  try {
    await pool.query(`vacuum (analyze) ${PRUNED_TABLES}`);
    return null;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return `VACUUM failed (${why}): the deleted rows stay in the tables' files until autovacuum reaches them`;
  }
}
