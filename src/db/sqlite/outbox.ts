import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { CHANGE_ROWS_SQL } from '../change-columns.js';
import { FIRST_LISTING_RUN_SQL } from '../first-listing.js';
import { entriesOfChanges, failedStreakOf, mirrorPathReader, streakSinceOf } from '../commit-plans.js';
import type { SqliteHandle } from './handle.js';
import { changeSubjects } from '../page-queries.js';
import { mediaShasAt } from './media.js';
import type { OutboxFacts, OutboxPlan } from '../run-commit.js';
import type { OutboxChannel } from '../enums.js';
import { runs, type ChangeRow } from '../schema.js';

/** A fresh `webhook-id`: random, so two mirrors of one upstream never collide at a receiver. */
export function newWebhookId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/**
 * Writes the messages `plan` composes for run `runId`, and one pending delivery of each to every
 * URL, due at once. Runs inside the transaction that records the run: the outbox rows then exist
 * exactly when the run does.
 */
export function writeOutbox(store: SqliteHandle, runId: number, plan: OutboxPlan): void {
  if (plan.urls.length === 0) return;
  const run = store.db.select().from(runs).where(eq(runs.id, runId)).get();
  if (!run) return;
  const facts: OutboxFacts = {
    run,
    firstListingRun: firstListingRun(store),
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
  enqueue(store, runId, plan.messages(facts), plan.urls, plan.channel ?? 'webhook');
}

/** The store's first listing (FIRST_LISTING_RUN_SQL), or null before any. */
export function firstListingRun(store: SqliteHandle): number | null {
  return (store.sqlite.prepare(FIRST_LISTING_RUN_SQL).pluck().get() as number | null | undefined) ?? null;
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

/** One message row per message, and one pending delivery of it to each endpoint, due at once. */
function enqueue(
  store: SqliteHandle,
  runId: number,
  messages: Iterable<{ type: string; body: string }>,
  urls: readonly string[],
  channel: OutboxChannel,
): void {
  const now = new Date().toISOString();
  let endpointIds: number[] | null = null;
  const insertMessage = store.sqlite.prepare(
    `insert into webhook_messages (webhook_id, type, run_id, created_at, body) values (?, ?, ?, ?, ?)`,
  );
  const insertDelivery = store.sqlite.prepare(
    `insert into webhook_deliveries (message_id, endpoint_id, status, next_attempt_at, created_at)
     values (?, ?, 'pending', ?, ?)`,
  );
  for (const message of messages) {
    const messageId = insertMessage.run(
      newWebhookId(),
      message.type,
      runId,
      now,
      message.body,
    ).lastInsertRowid;
    endpointIds ??= urls.map((url) => endpointId(store, url, channel, now));
    for (const endpoint of endpointIds) insertDelivery.run(messageId, endpoint, now, now);
  }
}

/** The endpoint row of a URL, created on first use with the channel its rows go to. */
export function endpointId(store: SqliteHandle, url: string, channel: OutboxChannel, now: string): number {
  store.sqlite
    .prepare(
      'insert into webhook_endpoints (url, channel, created_at) values (?, ?, ?) on conflict (url) do nothing',
    )
    .run(url, channel, now);
  return store.sqlite.prepare('select id from webhook_endpoints where url = ?').pluck().get(url) as number;
}
