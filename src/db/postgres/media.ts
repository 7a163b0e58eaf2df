import { announceMediaDropped } from './commit-watch.js';
import type { PgContext } from './context.js';
import { run, transaction, tuples, type Queryable } from './sql.js';

// The media mirror's writes and the commit's read on PostgreSQL: the twin of src/db/sqlite/media.ts
// (the other reads: src/db/media-reads.ts).

export async function dropMediaUnusedSince(ctx: PgContext, cutoff: string): Promise<string[]> {
  const dropped = await transaction(ctx.pool, async ({ client }) => {
    const found = await tuples<[string]>(
      client,
      `update media_blobs set dropped_at = $2
        where sha256 in (
          select b.sha256 from media_blobs b
           where b.dropped_at is null
             and not exists (
               select 1 from media_versions mv left join runs r on r.id = mv.valid_to_run
                where mv.sha256 = b.sha256
                  and (mv.valid_to_run is null or r.finished_at is null or r.finished_at >= $1))
           for update)
        returning sha256`,
      [cutoff, new Date().toISOString()],
    );
    const shas = found.map(([sha]) => sha).sort();
    // Their bytes go with the rows: no instance serves a dropped file (keptBlob says none).
    if (shas.length > 0) {
      await run(client, 'delete from media_blob_chunks where sha256 = any($1::text[])', [shas]);
    }
    return shas;
  });
  if (dropped.length > 0) await announceMediaDropped(ctx.pool);
  return dropped;
}

/** The [url, sha256] of every file held as of run `runId`; on the pool, or inside a commit's transaction. */
export async function mediaShasAt(db: Queryable, runId: number): Promise<[url: string, sha256: string][]> {
  return tuples<[string, string]>(
    db,
    `select mv.url, mv.sha256 from media_versions mv
       join media_blobs b on b.sha256 = mv.sha256 and b.dropped_at is null
      where mv.valid_from_run <= $1 and (mv.valid_to_run is null or mv.valid_to_run > $1)
      order by mv.id`,
    [runId],
  );
}
