import { eq } from 'drizzle-orm';
import { CHANGE_ROWS_SQL } from '../change-columns.js';
import { entriesOfChanges, failedStreakOf, mirrorPathReader, streakSinceOf } from '../commit-plans.js';
import type { SqliteHandle } from './handle.js';
import { changeSubjects } from '../page-queries.js';
import { mediaShasAt } from './media.js';
import type { OutboxFacts, OutboxPlan } from '../run-commit.js';
import { enqueue, firstListingRun, type DigestTransaction } from '../outbox-enqueue.js';
import { outboxPortOf, transactionPortOf } from './sql-port.js';
import { PortNotificationOutbox } from '../notify-outbox.js';
import type { SqlPort } from '../sql-port.js';
import { runs, type ChangeRow } from '../schema.js';

/**
 * Writes the messages `plan` composes for run `runId`, and one pending delivery of each to every
 * URL, due at once. Runs inside the transaction that records the run: the outbox rows then exist
 * exactly when the run does.
 */
export async function writeOutbox(
  store: SqliteHandle,
  tx: SqlPort,
  runId: number,
  plan: OutboxPlan,
): Promise<void> {
  if (plan.urls.length === 0) return;
  const run = store.db.select().from(runs).where(eq(runs.id, runId)).get();
  if (!run) return;
  const facts: OutboxFacts = {
    run,
    firstListingRun: await firstListingRun(tx),
    failedBefore: failedStreak(store, runId - 1),
    changes: () => runChanges(store, runId),
    changesBetween: (fromId, toId) =>
      store.sqlite
        .prepare(`${CHANGE_ROWS_SQL} where c.id between ? and ? order by c.id`)
        .all(fromId, toId) as ChangeRow[],
    subjectsOf: (rows) => changeSubjects(store, rows),
    servingSince: servingSince(store, runId),
    streakSince: streakSince(store, runId),
    entriesOf: (rows) => entriesOf(store, rows),
    mirrorPathOf: mirrorPathReader(() => mediaShasAt(store, runId)),
  };
  // Composed to the end before a row is written: the facts read lazily, over open statements.
  const messages = [...plan.messages(facts)];
  await enqueue(tx, runId, messages, plan.urls, plan.channel ?? 'webhook');
}

/** When the latest succeeded run before `runId` finished: the snapshot still served. */
function servingSince(store: SqliteHandle, runId: number): string | null {
  const at = store.sqlite
    .prepare(`select finished_at from runs where id < ? and status = 'succeeded' order by id desc limit 1`)
    .pluck()
    .get(runId) as string | null | undefined;
  return at ?? null;
}

/** Each change's coworker entry at its run: the stored whole entry, or the version the run left. */
function entriesOf(store: SqliteHandle, rows: readonly ChangeRow[]): Map<number, string> {
  const version = store.sqlite
    .prepare(
      `select body from versions where uuid = ? and slot = ? and valid_from_run <= ?
        order by valid_from_run desc limit 1`,
    )
    .pluck();
  return entriesOfChanges(rows, (row) => version.get(row.uuid, row.slot, row.runId) as string | undefined);
}

/** When the first failed run of the streak ending at `runId` started, or null when there is none. */
function streakSince(store: SqliteHandle, runId: number): string | null {
  const rows = store.sqlite
    .prepare(
      `select id, status, started_at from runs
        where id <= ? and status in ('failed', 'succeeded') order by id desc`,
    )
    .raw()
    .iterate(runId) as IterableIterator<[number, string, string]>;
  return streakSinceOf(runId, rows);
}

/**
 * Failed runs in a row ending at `lastRunId`. Aborted runs (a shutdown, a crash) neither extend nor
 * break a streak: they say nothing about the upstream.
 */
function failedStreak(store: SqliteHandle, lastRunId: number): number {
  return failedStreakOf(
    store.sqlite
      .prepare(`select status from runs where id <= ? and status in ('failed', 'succeeded') order by id desc`)
      .pluck()
      .iterate(lastRunId) as IterableIterator<string>,
  );
}

/** Run `runId`'s changes, oldest first. */
function* runChanges(store: SqliteHandle, runId: number): Iterable<ChangeRow> {
  const firstId = firstChangeId(store, runId);
  if (firstId === undefined) return;
  const rows = store.sqlite
    .prepare(`${CHANGE_ROWS_SQL} where c.id >= ? order by c.id`)
    .iterate(firstId) as IterableIterator<ChangeRow>;
  for (const row of rows) {
    if (row.runId !== runId) return;
    yield row;
  }
}

/**
 * The first change row of run `runId`. Its rows are the newest of the table while its transaction is
 * open, so a walk down the primary key from the end finds them without an index on run_id.
 */
function firstChangeId(store: SqliteHandle, runId: number): number | undefined {
  const rows = store.sqlite
    .prepare('select id, run_id from changes order by id desc')
    .raw()
    .iterate() as IterableIterator<[number, number]>;
  let first: number | undefined;
  for (const [id, rowRun] of rows) {
    if (rowRun > runId) continue;
    if (rowRun < runId) break;
    first = id;
  }
  return first;
}

/** A digest writer's transaction on SQLite: in the connection's write turn, under its write lock. */
export function sqliteDigestTransaction(store: SqliteHandle): DigestTransaction {
  return (work) =>
    transactionPortOf(store.sqlite).write((tx) =>
      work(tx, (rows) => Promise.resolve(changeSubjects(store, rows))),
    );
}

/** The notification rows of the outbox on SQLite (src/db/notify-outbox.ts), digest and all. */
export function sqliteNotificationOutbox(store: SqliteHandle): PortNotificationOutbox {
  return new PortNotificationOutbox(outboxPortOf(store.sqlite), sqliteDigestTransaction(store));
}
