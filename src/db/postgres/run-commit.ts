import type { RunEnd } from '../run-commit.js';
import { recordRunEnd } from '../run-ends.js';
import type { PgContext } from './context.js';
import { writeRunOutboxes } from '../run-outbox.js';
import { pgSqlPort } from './sql-port.js';
import { transaction } from './sql.js';

/** Records a run's end without data, and the notification it calls for, in one transaction. */
export async function endRun(ctx: PgContext, end: RunEnd): Promise<void> {
  await transaction(ctx.pool, async (tx) => {
    const port = pgSqlPort(tx.client);
    await recordRunEnd(port, end);
    await writeRunOutboxes(port, end.runId, [end.outbox, end.notify]);
  });
}
