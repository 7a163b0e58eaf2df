import type { MirrorDatabase } from './open.js';
import { runs, type RunTrigger } from './schema.js';

/**
 * A run that failed before it could record itself (its process died before taking the lock): one
 * finished `failed` row, so `runs`, `/runs/` and the API show the attempt and why. Returns its id.
 * It claims no tick (`scheduled_for` stays null): it never served one, so another instance may.
 */
export function recordFailedRun(
  store: MirrorDatabase,
  run: { upstream: string; startedAt: Date; trigger: RunTrigger; error: { code: string; message: string } },
): number {
  return store.db
    .insert(runs)
    .values({
      status: 'failed',
      startedAt: run.startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      upstream: run.upstream,
      trigger: run.trigger,
      errorCode: run.error.code,
      errorMessage: run.error.message,
    })
    .returning({ id: runs.id })
    .get().id;
}
