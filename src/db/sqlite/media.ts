import type { MirrorDatabase } from '../open.js';

/** Objects a committed row vouches for: everything else in the media folder is a killed run's leftover. */
export function liveMediaObjects(store: MirrorDatabase): Set<string> {
  return new Set(
    store.sqlite.prepare('select sha256 from media_blobs where dropped_at is null').pluck().all() as string[],
  );
}

export interface HeldMedia {
  url: string;
  sha256: string;
  etag: string | null;
  lastModified: string | null;
}

/** Per URL, the bytes held (its latest version whose file is live) and the validators of its last attempt. */
export function heldMedia(store: MirrorDatabase): HeldMedia[] {
  const rows = store.sqlite
    .prepare(
      `select mv.url, mv.sha256, mu.etag, mu.last_modified
         from media_versions mv
         join media_blobs b on b.sha256 = mv.sha256 and b.dropped_at is null
         left join media_urls mu on mu.url = mv.url
        where mv.id = (select max(id) from media_versions where url = mv.url)`,
    )
    .raw()
    .all() as [string, string, string | null, string | null][];
  return rows.map(([url, sha256, etag, lastModified]) => ({ url, sha256, etag, lastModified }));
}

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

export interface KeptBlob {
  size: number;
  contentType: string;
}

/** A reader of one kept (not dropped) media file's row by sha256; prepared once, for the media route. */
export function keptBlobReader(store: MirrorDatabase): (sha256: string) => KeptBlob | undefined {
  const lookup = store.sqlite.prepare(
    'select size, content_type as contentType from media_blobs where sha256 = ? and dropped_at is null',
  );
  return (sha256) => lookup.get(sha256) as KeptBlob | undefined;
}

export interface MediaCounts {
  fetched: number;
  revalidated: number;
  failed: number;
  bytes: number;
}

export interface MediaFigures {
  /** Summed over every run. */
  total: () => MediaCounts;
  /** The latest media run's own counts (zeros before the first). */
  lastRun: () => MediaCounts;
  /** Files kept and their size. */
  stored: () => { files: number; bytes: number };
}

/** A reader of the media figures /metrics shows; its statements are prepared once. */
export function mediaFiguresReader(store: MirrorDatabase): MediaFigures {
  const totals = store.sqlite.prepare(
    `select coalesce(sum(fetched), 0) as fetched, coalesce(sum(revalidated), 0) as revalidated,
            coalesce(sum(failed), 0) as failed, coalesce(sum(bytes), 0) as bytes from media_runs`,
  );
  const latest = store.sqlite.prepare(
    'select fetched, revalidated, failed, bytes from media_runs order by run_id desc limit 1',
  );
  const held = store.sqlite.prepare(
    'select count(*) as files, coalesce(sum(size), 0) as bytes from media_blobs where dropped_at is null',
  );
  const none: MediaCounts = { fetched: 0, revalidated: 0, failed: 0, bytes: 0 };
  return {
    total: () => totals.get() as MediaCounts,
    lastRun: () => (latest.get() as MediaCounts | undefined) ?? none,
    stored: () => held.get() as { files: number; bytes: number },
  };
}
