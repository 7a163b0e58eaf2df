import type { SqliteHandle } from './handle.js';
import type { RunEnd } from '../run-commit.js';
import { recordRunEnd } from '../run-ends.js';
import { writeOutbox } from './outbox.js';
import { transactionPortOf } from './sql-port.js';

/** Records a run's end without data, and the notification it calls for, in one transaction. */
export function endRun(store: SqliteHandle, end: RunEnd): Promise<void> {
  return transactionPortOf(store.sqlite).write(async (tx) => {
    await recordRunEnd(tx, end);
    if (end.outbox) await writeOutbox(store, tx, end.runId, end.outbox);
    if (end.notify) await writeOutbox(store, tx, end.runId, end.notify);
  });
}
