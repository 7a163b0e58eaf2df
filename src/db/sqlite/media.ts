import type { SqliteHandle } from './handle.js';
import { MEDIA_SHAS_AT_SQL } from '../media-reads.js';
import { prepared } from '../prepared.js';

/**
 * `mediaShasAt` (src/db/media-reads.ts) inside the run commit's synchronous transaction, which
 * cannot await the port: the same statement.
 */
export function mediaShasAt(store: SqliteHandle, runId: number): [url: string, sha256: string][] {
  return prepared(store.sqlite, MEDIA_SHAS_AT_SQL).raw().all(runId, runId) as [string, string][];
}
