import type { MirrorDatabase } from '../open.js';

/**
 * Marks dropped, in one transaction, the files no media version valid since `cutoff` references
 * (an open version never is); returns their sha256s, for the caller to delete after the commit.
 */
export function dropMediaUnusedSince(store: MirrorDatabase, cutoff: string): string[] {
  return store.sqlite
    .transaction(() => {
      const shas = store.sqlite
        .prepare(
          `select b.sha256 from media_blobs b
            where b.dropped_at is null
              and not exists (
                select 1 from media_versions mv left join runs r on r.id = mv.valid_to_run
                 where mv.sha256 = b.sha256 and (mv.valid_to_run is null or r.finished_at is null or r.finished_at >= ?))`,
        )
        .pluck()
        .all(cutoff) as string[];
      const mark = store.sqlite.prepare('update media_blobs set dropped_at = ? where sha256 = ?');
      const now = new Date().toISOString();
      for (const sha of shas) mark.run(now, sha);
      return shas;
    })
    .immediate();
}

/** The media URLs mirrored as of run `runId` and their sha256: the versions valid then, whose file is kept. */
export function mediaShasAt(store: MirrorDatabase, runId: number): [url: string, sha256: string][] {
  return store.sqlite
    .prepare(
      `select mv.url, mv.sha256 from media_versions mv
         join media_blobs b on b.sha256 = mv.sha256 and b.dropped_at is null
        where mv.valid_from_run <= ? and (mv.valid_to_run is null or mv.valid_to_run > ?)`,
    )
    .raw()
    .all(runId, runId) as [string, string][];
}
