import type { MirrorDatabase, SqliteHandle } from './open.js';
import type { MediaRunRow } from './schema.js';

/** Media figures of the given runs (runs that mirrored no media are absent). */
export function mediaRunsByIds(
  store: Pick<SqliteHandle, 'sqlite'>,
  runIds: readonly number[],
): Map<number, MediaRunRow> {
  if (runIds.length === 0) return new Map();
  const rows = store.sqlite
    .prepare(
      `select run_id as runId, fetched, revalidated, failed, bytes from media_runs
        where run_id in (select value from json_each(?))`,
    )
    .all(JSON.stringify(runIds)) as MediaRunRow[];
  return new Map(rows.map((row) => [row.runId, row]));
}

/** Whether any mirrored file is recorded as stored (so the media folder must hold it). */
export function hasStoredMedia(store: MirrorDatabase): boolean {
  return (
    store.sqlite.prepare('select 1 from media_blobs where dropped_at is null limit 1').get() !== undefined
  );
}

/** The file name a mirror URL ends with: the last path segment of the upstream URL, as encoded there. */
export function mediaFileName(url: string): string {
  const path = URL.canParse(url) ? new URL(url).pathname : '';
  const name = path.slice(path.lastIndexOf('/') + 1);
  return name === '' ? 'file' : name;
}

/** The mirror's own path of the bytes it holds for an upstream media URL (the /media route's). */
export function mirrorMediaPath(sha256: string, url: string): string {
  return `/media/${sha256}/${mediaFileName(url)}`;
}
