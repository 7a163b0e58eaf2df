import type { SqliteHandle } from './handle.js';
import { MEDIA_SHAS_AT_SQL } from '../media-reads.js';
import { prepared } from '../prepared.js';

/**
 * `mediaShasAt` (src/db/media-reads.ts) for a run's messages as they are composed: composing is
 * synchronous and reads the files only when a message names one (`mirrorPathReader`), so this read
 * cannot await the port. The same statement.
 */
export function mediaShasAt(store: SqliteHandle, runId: number): [url: string, sha256: string][] {
  return prepared(store.sqlite, MEDIA_SHAS_AT_SQL).raw().all(runId, runId) as [string, string][];
}
