import type { SqlPort } from './sql-port.js';
import type { MediaFailures } from './store.js';

// Reads both dialects answer with the same SQL, written once over the port.

/** See `Store.refusalStreakStart`: the streak ends at the newest earlier run that is not part of it. */
export async function refusalStreakStart(
  port: SqlPort,
  runId: number,
  code: string,
  entries: number,
): Promise<string | null> {
  const [row] = await port.rows<[string | null]>(
    `select min(started_at) from runs
      where id < ? and id > coalesce(
        (select max(id) from runs
          where id < ? and (error_code is distinct from cast(? as text)
                            or entries is distinct from cast(? as integer))), 0)`,
    [runId, runId, code, entries],
  );
  return row?.[0] ?? null;
}

/**
 * The URLs whose last attempt was run `runId`'s and failed: counted by code, and the first `limit`
 * by URL. A URL a later run tried again has moved on to that run (media_urls keeps each URL's last
 * attempt), so an older run's figures here can be fewer than its `media_runs.failed`.
 */
export async function mediaFailuresOf(port: SqlPort, runId: number, limit: number): Promise<MediaFailures> {
  const byCode = await port.rows<[string, number]>(
    `select failure_code, count(*) from media_urls
      where checked_run = ? and failure_code is not null
      group by failure_code order by count(*) desc, failure_code`,
    [runId],
  );
  const first = await port.rows<[string, string, string]>(
    `select url, failure_code, coalesce(failure_message, '') from media_urls
      where checked_run = ? and failure_code is not null order by url limit ?`,
    [runId, limit],
  );
  return {
    byCode: byCode.map(([code, count]) => ({ code, count })),
    first: first.map(([url, code, message]) => ({ url, code, message })),
  };
}
