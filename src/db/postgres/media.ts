import type { HeldMedia, KeptBlob, MediaCounts } from '../sqlite/media.js';
import type { MediaRunRow } from '../schema.js';
import { announceMediaDropped } from './commit-watch.js';
import type { PgContext } from './context.js';
import { one, rows, run, transaction, tuples, type Queryable } from './sql.js';

// The media mirror's rows on PostgreSQL: the twin of src/db/sqlite/media.ts.

export async function liveMediaObjects(ctx: PgContext): Promise<Set<string>> {
  const found = await tuples<[string]>(ctx.pool, 'select sha256 from media_blobs where dropped_at is null');
  return new Set(found.map(([sha]) => sha));
}

export async function heldMedia(ctx: PgContext): Promise<HeldMedia[]> {
  return rows<HeldMedia>(
    ctx.pool,
    `select mv.url, mv.sha256, mu.etag, mu.last_modified as "lastModified"
       from media_versions mv
       join media_blobs b on b.sha256 = mv.sha256 and b.dropped_at is null
       left join media_urls mu on mu.url = mv.url
      where mv.id = (select max(id) from media_versions where url = mv.url)
      order by mv.id`,
  );
}

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

export async function keptBlob(ctx: PgContext, sha256: string): Promise<KeptBlob | undefined> {
  return one<KeptBlob>(
    ctx.pool,
    'select size, content_type as "contentType" from media_blobs where sha256 = $1 and dropped_at is null',
    [sha256],
  );
}

const NONE: MediaCounts = { fetched: 0, revalidated: 0, failed: 0, bytes: 0 };

export async function mediaFigures(
  ctx: PgContext,
): Promise<{ total: MediaCounts; lastRun: MediaCounts; stored: { files: number; bytes: number } }> {
  // sum() of bigint is numeric, read as text: cast back to bigint (read as a number).
  const [total, lastRun, stored] = await Promise.all([
    one<MediaCounts>(
      ctx.pool,
      `select coalesce(sum(fetched), 0)::bigint as fetched, coalesce(sum(revalidated), 0)::bigint as revalidated,
              coalesce(sum(failed), 0)::bigint as failed, coalesce(sum(bytes), 0)::bigint as bytes from media_runs`,
    ),
    one<MediaCounts>(
      ctx.pool,
      'select fetched, revalidated, failed, bytes from media_runs order by run_id desc limit 1',
    ),
    one<{ files: number; bytes: number }>(
      ctx.pool,
      `select count(*) as files, coalesce(sum(size), 0)::bigint as bytes from media_blobs where dropped_at is null`,
    ),
  ]);
  return { total: total ?? NONE, lastRun: lastRun ?? NONE, stored: stored ?? { files: 0, bytes: 0 } };
}

export async function mediaRunsByIds(
  ctx: PgContext,
  runIds: readonly number[],
): Promise<Map<number, MediaRunRow>> {
  if (runIds.length === 0) return new Map();
  const found = await rows<MediaRunRow>(
    ctx.pool,
    `select run_id as "runId", fetched, revalidated, failed, bytes from media_runs
      where run_id = any($1::bigint[]) order by run_id`,
    [[...runIds]],
  );
  return new Map(found.map((row) => [row.runId, row]));
}

/** Whether any mirrored file is still held. */
export async function hasStoredMedia(ctx: PgContext): Promise<boolean> {
  return (await one(ctx.pool, 'select 1 from media_blobs where dropped_at is null limit 1')) !== undefined;
}
