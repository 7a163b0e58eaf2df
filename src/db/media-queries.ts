import type { MirrorDatabase } from './open.js';
import type { MediaRunRow } from './schema.js';

/** Media figures of the given runs (runs that mirrored no media are absent). */
export function mediaRunsByIds(store: MirrorDatabase, runIds: readonly number[]): Map<number, MediaRunRow> {
  if (runIds.length === 0) return new Map();
  const rows = store.sqlite
    .prepare(
      `select run_id as runId, fetched, revalidated, failed, bytes from media_runs
        where run_id in (select value from json_each(?))`,
    )
    .all(JSON.stringify(runIds)) as MediaRunRow[];
  return new Map(rows.map((row) => [row.runId, row]));
}

export interface MediaUrlState {
  url: string;
  sha256: string | null;
  failureCode: string | null;
  failureMessage: string | null;
  checkedRun: number;
}

/** Every media URL attempted, with the bytes currently served for it and its last failure. */
export function mediaUrlStates(store: MirrorDatabase): MediaUrlState[] {
  return store.sqlite
    .prepare(
      `select mu.url, mv.sha256, mu.failure_code as failureCode, mu.failure_message as failureMessage,
              mu.checked_run as checkedRun
         from media_urls mu
         left join media_versions mv on mv.url = mu.url and mv.valid_to_run is null
        order by mu.url`,
    )
    .all() as MediaUrlState[];
}
