import type pg from 'pg';
import { connectOwnClient } from './run-lock.js';
import { endClient } from './session-bounds.js';
import {
  openRunStage,
  type RunStage,
  type StageCommit,
  type StageConnection,
  type StageDialect,
} from '../run-stage.js';
import { announceCommit } from './commit-watch.js';
import type { PgContext } from './context.js';
import { writeMediaRows } from '../media-commit.js';
import { writeRunOutboxes } from '../run-outbox.js';
import { assertStillRunning, markSucceeded } from '../run-ends.js';
import type { SqlPort } from '../sql-port.js';
import { assertHeld } from './runs.js';
import { latestSucceededRun } from '../run-reads.js';
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
  try {
    return await openRunStage(pgStageDialect(ctx, client));
  } catch (error) {
    await endClient(client);
    throw error;
  }
}

function pgStageDialect(ctx: PgContext, client: pg.Client): StageDialect {
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
  return {
    conn,
    lastSeen: async () => {
      const last = await latestSucceededRun(conn);
      return last && { id: last.id, finishedAt: last.finishedAt };
    },
    commit: (commit, statements, entries) =>
      conn.transaction(async () => {
        assertHeld(ctx, commit.runId);
        await assertStillRunning(conn, commit.runId);
        for (const [sql, params] of statements) await conn.run(sql, params);
        await finish(client, conn, commit, entries);
      }, true),
    // Ending the session drops the TEMP tables, whether or not the run committed.
    release: () => endClient(client),
  };
}

/** After the listing: the run's figures, media rows, outbox and notifications, and the announcement. */
async function finish(client: pg.Client, port: SqlPort, commit: StageCommit, entries: number): Promise<void> {
  await markSucceeded(port, commit, entries);
  // Media rows first, as the SQLite store writes them: a run's messages see its own media.
  if (commit.media) await writeMediaRows(port, commit.runId, commit.media);
  await writeRunOutboxes(port, commit.runId, [commit.outbox, commit.notify]);
  // Delivered to every instance's listener at the commit, never for a rollback.
  await announceCommit(client, commit.runId);
}

/**
 * The stage with every failure of its own calls mapped as the store's operations map theirs (a lost
 * connection is a DB_ERROR saying what to check): a run that loses PostgreSQL mid-crawl or mid-diff
 * fails with the code a lost database has everywhere else.
 */
export function guardedStage(stage: RunStage, mapError: (error: unknown) => unknown): RunStage {
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      call(...args).catch((error: unknown) => {
        throw mapError(error);
      });
  return {
    append: guard((entries) => stage.append(entries)),
    reset: guard(() => stage.reset()),
    entryCount: guard(() => stage.entryCount()),
    holdCurrent: guard((hashOf) => stage.holdCurrent(hashOf)),
    chunk: guard((after, rows) => stage.chunk(after, rows)),
    entryTexts: guard((positions) => stage.entryTexts(positions)),
    record: guard((outcome) => stage.record(outcome)),
    recordFirstListing: guard(() => stage.recordFirstListing()),
    repeatedUuids: guard((limit) => stage.repeatedUuids(limit)),
    exactCopies: guard(() => stage.exactCopies()),
    pageTexts: guard((page) => stage.pageTexts(page)),
    texts: () => guardedTexts(stage.texts(), mapError),
    commit: guard((commit) => stage.commit(commit)),
    close: guard(() => stage.close()),
  };
}

async function* guardedTexts(
  texts: AsyncIterable<string>,
  mapError: (error: unknown) => unknown,
): AsyncIterable<string> {
  try {
    yield* texts;
  } catch (error) {
    throw mapError(error);
  }
}
