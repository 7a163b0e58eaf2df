import type { SqlPort, TransactionPort } from './sql-port.js';
import type { MediaRunRow } from './schema.js';
import type { HeldMedia, KeptBlob, MediaCounts } from './store.js';

// The media mirror's rows, read once for both dialects over the port.

/** Objects a committed row vouches for: everything else in the media folder is a killed run's leftover. */
export async function liveMediaObjects(port: SqlPort): Promise<Set<string>> {
  return new Set(await port.values<string>('select sha256 from media_blobs where dropped_at is null'));
}

/** Per URL, the bytes held (its latest version whose file is live) and the validators of its last attempt. */
export async function heldMedia(port: SqlPort): Promise<HeldMedia[]> {
  const found = await port.rows<[string, string, string | null, string | null]>(
    `select mv.url, mv.sha256, mu.etag, mu.last_modified
       from media_versions mv
       join media_blobs b on b.sha256 = mv.sha256 and b.dropped_at is null
       left join media_urls mu on mu.url = mv.url
      where mv.id = (select max(id) from media_versions where url = mv.url)
      order by mv.id`,
  );
  return found.map(([url, sha256, etag, lastModified]) => ({ url, sha256, etag, lastModified }));
}

/** One kept (not dropped) media file's row by sha256, for the media route. */
export async function keptBlob(port: SqlPort, sha256: string): Promise<KeptBlob | undefined> {
  const [found] = await port.rows<[number, string]>(
    'select size, content_type from media_blobs where sha256 = ? and dropped_at is null',
    [sha256],
  );
  return found && { size: found[0], contentType: found[1] };
}

/** A media run's counts, read in their columns' order (zeros without a row). */
const countsOf = ([fetched = 0, revalidated = 0, failed = 0, bytes = 0]: number[] = []): MediaCounts => ({
  fetched,
  revalidated,
  failed,
  bytes,
});

/**
 * The media figures /metrics shows: summed over every run, the latest media run's own (zeros
 * before the first), the files kept and their size. PostgreSQL sums a bigint as numeric, read as
 * text: each sum is cast back to bigint (read as a number), as SQLite's already is.
 */
export async function mediaFigures(
  port: SqlPort,
): Promise<{ total: MediaCounts; lastRun: MediaCounts; stored: { files: number; bytes: number } }> {
  const sum = (column: string) => `cast(coalesce(sum(${column}), 0) as bigint)`;
  const [[total], [lastRun], [stored]] = await Promise.all([
    port.rows<number[]>(
      `select ${sum('fetched')}, ${sum('revalidated')}, ${sum('failed')}, ${sum('bytes')} from media_runs`,
    ),
    port.rows<number[]>(
      'select fetched, revalidated, failed, bytes from media_runs order by run_id desc limit 1',
    ),
    port.rows<[number, number]>(`select count(*), ${sum('size')} from media_blobs where dropped_at is null`),
  ]);
  return {
    total: countsOf(total),
    lastRun: countsOf(lastRun),
    stored: { files: stored?.[0] ?? 0, bytes: stored?.[1] ?? 0 },
  };
}

/** The media figures of the given runs, by run id (a run that fetched nothing has none). */
export async function mediaRunsByIds(
  port: SqlPort,
  runIds: readonly number[],
): Promise<Map<number, MediaRunRow>> {
  if (runIds.length === 0) return new Map();
  const among = port.oneOf('run_id', 'bigint', [...runIds]);
  const found = await port.rows<[number, number, number, number, number]>(
    `select run_id, fetched, revalidated, failed, bytes from media_runs where ${among.sql} order by run_id`,
    [among.param],
  );
  return new Map(found.map(([runId, ...counts]) => [runId, { runId, ...countsOf(counts) }]));
}

/** Whether any mirrored file is recorded as stored (so the media folder must hold it). */
export async function hasStoredMedia(port: SqlPort): Promise<boolean> {
  return (await port.values('select 1 from media_blobs where dropped_at is null limit 1')).length > 0;
}

/** The media URLs mirrored as of run `runId` and their sha256, in the order they were first held. */
export function mediaShasAt(port: SqlPort, runId: number): Promise<[url: string, sha256: string][]> {
  return port.rows<[string, string]>(
    `select mv.url, mv.sha256 from media_versions mv
       join media_blobs b on b.sha256 = mv.sha256 and b.dropped_at is null
      where mv.valid_from_run <= ? and (mv.valid_to_run is null or mv.valid_to_run > ?)
      order by mv.id`,
    [runId, runId],
  );
}

/**
 * Marks dropped, in one write transaction, the files no media version valid since `cutoff`
 * references (an open version never is); returns their sha256s, for the caller to delete after the
 * commit. PostgreSQL locks the rows it drops (a second instance's drop waits, then finds them
 * dropped) and deletes their bytes with them: no instance serves a dropped file.
 */
export async function dropMediaUnusedSince(port: TransactionPort, cutoff: string): Promise<string[]> {
  return port.write(async (tx) => {
    const shas = await tx.values<string>(
      `select b.sha256 from media_blobs b
        where b.dropped_at is null
          and not exists (
            select 1 from media_versions mv left join runs r on r.id = mv.valid_to_run
             where mv.sha256 = b.sha256 and (mv.valid_to_run is null or r.finished_at is null or r.finished_at >= ?))
        order by b.sha256 ${tx.dialect === 'postgres' ? 'for update of b' : ''}`,
      [cutoff],
    );
    if (shas.length === 0) return shas;
    const dropped = tx.oneOf('sha256', 'text', shas);
    await tx.run(`update media_blobs set dropped_at = ? where ${dropped.sql}`, [
      new Date().toISOString(),
      dropped.param,
    ]);
    if (tx.dialect === 'postgres')
      await tx.run(`delete from media_blob_chunks where ${dropped.sql}`, [dropped.param]);
    return shas;
  });
}
