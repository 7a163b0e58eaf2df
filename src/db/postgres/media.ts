import { mediaShasAt as mediaShasAtOf } from '../media-reads.js';
import { pgSqlPort } from './sql-port.js';
import type { Queryable } from './sql.js';

/** `mediaShasAt` (src/db/media-reads.ts) on the pool, or inside a commit's transaction. */
export function mediaShasAt(db: Queryable, runId: number): Promise<[url: string, sha256: string][]> {
  return mediaShasAtOf(pgSqlPort(db), runId);
}
