import { connectOwnClient } from './run-lock.js';
import { endClient } from './session-bounds.js';
import type { RunStage } from '../run-commit.js';
import { openRunStage, type StageConnection } from '../run-stage.js';
import { announce } from './commit-watch.js';
import type { PgContext } from './context.js';
import { operationError } from './errors.js';
import { assertHeld } from './runs.js';
import { pgSqlPort } from './sql-port.js';
import { withinTransaction } from './sql.js';

/**
 * A run's stage in TEMP tables of ONE pooled connection held for the whole run: they live in that
 * session only, and the run's commit runs on it. A lost connection takes the stage with it.
 */
export async function openPgStage(ctx: PgContext, runId: number): Promise<RunStage> {
  assertHeld(ctx, runId);
  // A connection of its own, outside the pool, as the run lock has: held for the whole run, a pooled
  // one would leave DATABASE_POOL_MAX=1 nothing for the run's other reads (its heartbeat, media).
  const client = await connectOwnClient(ctx.target, ctx.instanceId, ctx.bounds);
  // A lost connection rejects the query in flight, which fails the run; unheard, the event would
  // end the process.
  client.on('error', () => undefined);
  const conn: StageConnection = {
    ...pgSqlPort(client),
    // As an array, the ids are a list of index seeks: `id in (subquery)` is planned as a hash join
    // over a scan of the whole table while the run's rows are a few percent of its history.
    byIds: (subquery) => `id = any(array(${subquery}))`,
    // A failed rollback leaves nothing behind: the session, and its stage, ends at release.
    transaction: (work) => withinTransaction(client, work),
  };
  try {
    const stage = await openRunStage({
      conn,
      commit: (runId, write) =>
        conn.transaction(async () => {
          assertHeld(ctx, runId);
          await write();
          // Delivered to every instance's listener at the commit, never for a rollback.
          await announce(client, runId);
        }),
      // Ending the session drops the TEMP tables, whether or not the run committed.
      release: () => endClient(client),
    });
    return guarded(stage, ctx);
  } catch (error) {
    await endClient(client);
    throw error;
  }
}

/** The stage's failures mapped as the store's operations map theirs: a lost database is a DB_ERROR. */
function guarded(stage: RunStage, ctx: PgContext): RunStage {
  const fail = (error: unknown): never => {
    throw operationError(error, ctx.target, ctx.bounds);
  };
  return {
    append: (entries) => stage.append(entries).catch(fail),
    reset: () => stage.reset().catch(fail),
    entryCount: () => stage.entryCount().catch(fail),
    holdCurrent: (hashOf) => stage.holdCurrent(hashOf).catch(fail),
    chunk: (after, rows) => stage.chunk(after, rows).catch(fail),
    entryTexts: (positions) => stage.entryTexts(positions).catch(fail),
    record: (outcome) => stage.record(outcome).catch(fail),
    recordFirstListing: () => stage.recordFirstListing().catch(fail),
    repeatedUuids: (limit) => stage.repeatedUuids(limit).catch(fail),
    exactCopies: () => stage.exactCopies().catch(fail),
    pageTexts: (page) => stage.pageTexts(page).catch(fail),
    async *texts() {
      try {
        yield* stage.texts();
      } catch (error) {
        fail(error);
      }
    },
    commit: (commit) => stage.commit(commit).catch(fail),
    close: () => stage.close().catch(fail),
  };
}
