import type { RunEnd } from '../run-commit.js';
import type { PgContext } from './context.js';
import { writeOutbox, type RunMemory } from './outbox.js';
import { run, transaction } from './sql.js';

/** Records a run's end without data, and the notification it calls for, in one transaction. */
export async function endRun(ctx: PgContext, end: RunEnd): Promise<void> {
  await transaction(ctx.pool, async (tx) => {
    await run(
      tx.client,
      `update runs set status = $2, finished_at = $3, error_code = $4, error_message = $5, pages = $6, entries = $7
        where id = $1 and status = 'running'`,
      [
        end.runId,
        end.status,
        new Date().toISOString(),
        end.error.code,
        end.error.message,
        end.stats?.pages ?? null,
        end.stats?.entries ?? null,
      ],
    );
    const memory: RunMemory = { changes: [], bodies: new Map() };
    if (end.outbox) await writeOutbox(tx, end.runId, end.outbox, memory);
    if (end.notify) await writeOutbox(tx, end.runId, end.notify, memory);
  });
}
