import type { SqliteHandle } from './handle.js';
import type { RunEnd } from '../run-commit.js';
import { recordRunEnd } from '../run-ends.js';
import { writeRunOutboxes } from '../run-outbox.js';
import { transactionPortOf } from './sql-port.js';

/** Records a run's end without data, and the notification it calls for, in one transaction. */
export function endRun(store: SqliteHandle, end: RunEnd): Promise<void> {
  return transactionPortOf(store.sqlite).write(async (tx) => {
    await recordRunEnd(tx, end);
    await writeRunOutboxes(tx, end.runId, [end.outbox, end.notify]);
  });
}
