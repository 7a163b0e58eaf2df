import { and, eq } from 'drizzle-orm';
import type { MirrorDatabase } from '../open.js';
import type { RunEnd } from '../run-commit.js';
import { runs } from '../schema.js';
import { writeOutbox } from './outbox.js';

/** Records a run's end without data, and the notification it calls for, in one transaction. */
export function endRun(store: MirrorDatabase, end: RunEnd): void {
  store.sqlite
    .transaction(() => {
      store.db
        .update(runs)
        .set({
          status: end.status,
          finishedAt: new Date().toISOString(),
          errorCode: end.error.code,
          errorMessage: end.error.message,
          pages: end.stats?.pages ?? null,
          entries: end.stats?.entries ?? null,
        })
        .where(and(eq(runs.id, end.runId), eq(runs.status, 'running')))
        .run();
      if (end.outbox) writeOutbox(store, end.runId, end.outbox);
      if (end.notify) writeOutbox(store, end.runId, end.notify);
    })
    .immediate();
}
