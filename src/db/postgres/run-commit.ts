import type { RunEnd } from '../run-commit.js';
import { recordRunEnd } from '../run-ends.js';
import type { PgContext } from './context.js';
import { writeOutbox, type RunMemory } from './outbox.js';
import { pgSqlPort } from './sql-port.js';
import { transaction } from './sql.js';

/** Records a run's end without data, and the notification it calls for, in one transaction. */
export async function endRun(ctx: PgContext, end: RunEnd): Promise<void> {
  await transaction(ctx.pool, async (tx) => {
    await recordRunEnd(pgSqlPort(tx.client), end);
    const memory: RunMemory = { changes: [], bodies: new Map() };
    if (end.outbox) await writeOutbox(tx, end.runId, end.outbox, memory);
    if (end.notify) await writeOutbox(tx, end.runId, end.notify, memory);
  });
}
