import { randomBytes } from 'node:crypto';
import type { WebhookEventType } from '../config/load-config.js';
import type { MirrorDatabase } from '../db/open.js';
import type { ChangeRow, RunRow } from '../db/schema.js';
import { changeView } from '../db/history-views.js';
import { maskUrlCredentials } from '../config/upstream-target.js';
import type { OutboxSettings } from './settings.js';
import { stringifyJson } from '../json/safe-json.js';

/** A `coworkers.changed` body above this is split into parts (`part`, `parts`). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

interface OutboxMessage {
  type: WebhookEventType;
  body: string;
}

/** A fresh `webhook-id`: random, so two mirrors of one upstream never collide at a receiver. */
function newWebhookId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/**
 * Writes the messages a succeeded run calls for (`sync.recovered`, `coworkers.changed`) and their
 * deliveries. Must run inside the transaction that records the run as succeeded: the outbox rows
 * then exist exactly when the run does.
 */
export function writeSucceededRunOutbox(
  store: MirrorDatabase,
  runId: number,
  settings: OutboxSettings | undefined,
): void {
  if (!settings || settings.urls.length === 0) return;
  const run = runRow(store, runId);
  if (run?.status !== 'succeeded') return;
  const messages: OutboxMessage[] = [];
  if (settings.events.includes('sync.recovered')) {
    const failedBefore = failedStreak(store, runId - 1);
    if (failedBefore >= settings.failureThreshold) {
      messages.push(envelope('sync.recovered', run, { failed_runs: failedBefore, counts: countsOf(run) }));
    }
  }
  enqueue(store, run, messages, settings.urls);
  if (settings.events.includes('coworkers.changed')) {
    enqueue(store, run, changedMessages(store, run), settings.urls);
  }
}

/**
 * Writes `sync.failed` when run `runId` is the failure that makes the streak reach the threshold
 * (once per streak). Must run inside the transaction that records the run as failed.
 */
export function writeFailedRunOutbox(
  store: MirrorDatabase,
  runId: number,
  settings: OutboxSettings | undefined,
): void {
  if (!settings || settings.urls.length === 0 || !settings.events.includes('sync.failed')) return;
  const run = runRow(store, runId);
  if (run?.status !== 'failed') return;
  const streak = failedStreak(store, runId);
  if (streak !== settings.failureThreshold) return;
  const message = envelope('sync.failed', run, {
    consecutive_failures: streak,
    error: { code: run.errorCode ?? 'UNEXPECTED', message: run.errorMessage ?? '' },
  });
  enqueue(store, run, [message], settings.urls);
}

function runRow(store: MirrorDatabase, runId: number): RunRow | undefined {
  return store.sqlite
    .prepare(
      `select id, status, started_at as startedAt, finished_at as finishedAt, upstream,
              added, changed, removed, returned, unchanged,
              error_code as errorCode, error_message as errorMessage
         from runs where id = ?`,
    )
    .get(runId) as RunRow | undefined;
}

/**
 * Failed runs in a row ending at `lastRunId`. Aborted runs (a shutdown, a crash) neither extend nor
 * break a streak: they say nothing about the upstream.
 */
function failedStreak(store: MirrorDatabase, lastRunId: number): number {
  const statuses = store.sqlite
    .prepare(`select status from runs where id <= ? and status in ('failed', 'succeeded') order by id desc`)
    .pluck()
    .iterate(lastRunId) as IterableIterator<string>;
  let streak = 0;
  for (const status of statuses) {
    if (status !== 'failed') break;
    streak++;
  }
  return streak;
}

function countsOf(run: RunRow) {
  return {
    added: run.added,
    changed: run.changed,
    removed: run.removed,
    returned: run.returned,
    unchanged: run.unchanged,
  };
}

function envelope(type: WebhookEventType, run: RunRow, data: Record<string, unknown>): OutboxMessage {
  const body = stringifyJson({
    type,
    timestamp: run.finishedAt ?? new Date().toISOString(),
    data: { run: run.id, upstream: maskUrlCredentials(run.upstream), ...data },
  });
  return { type, body };
}

/**
 * The run's changes, as `changes --json` shows them, in parts of at most MAX_PAYLOAD_BYTES (a single
 * change larger than that travels alone), built one part at a time: a first sync of 100,000 entries
 * never holds more than one part in memory. None when the run changed nothing.
 */
function changedMessages(store: MirrorDatabase, run: RunRow): Iterable<OutboxMessage> {
  const firstId = firstChangeId(store, run.id);
  if (firstId === undefined) return [];
  const counts = countsOf(run);
  const ranges = partRanges(store, run, firstId, counts);
  const rowsBetween = store.sqlite.prepare(`${CHANGE_COLUMNS} where id between ? and ? order by id`);
  // Lazy: each part's rows are read (and the statement done) only when the writer asks for it.
  return (function* () {
    for (const [i, [from, to]] of ranges.entries()) {
      const changes = (rowsBetween.all(from, to) as ChangeRow[]).map(changeView);
      yield envelope('coworkers.changed', run, { counts, part: i + 1, parts: ranges.length, changes });
    }
  })();
}

const CHANGE_COLUMNS = `select id, run_id as runId, at, uuid, slot, kind, field, old_value as oldValue,
                               new_value as newValue from changes`;

/**
 * The first change row of run `runId`. Its rows are the newest of the table while its transaction is
 * open, so a walk down the primary key from the end finds them without an index on run_id.
 */
function firstChangeId(store: MirrorDatabase, runId: number): number | undefined {
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

/** First pass: the id range of each part, measuring each change as it will be serialized. */
function partRanges(
  store: MirrorDatabase,
  run: RunRow,
  firstId: number,
  counts: ReturnType<typeof countsOf>,
): [number, number][] {
  const rows = store.sqlite
    .prepare(`${CHANGE_COLUMNS} where id >= ? order by id`)
    .iterate(firstId) as IterableIterator<ChangeRow>;
  // The envelope with part numbers as wide as they can get: what each part costs besides changes.
  const widest = Number.MAX_SAFE_INTEGER;
  const overhead = Buffer.byteLength(
    envelope('coworkers.changed', run, { counts, part: widest, parts: widest, changes: [] }).body,
  );
  const ranges: [number, number][] = [];
  let current: [number, number] | null = null;
  let bytes = overhead;
  for (const row of rows) {
    if (row.runId !== run.id) break;
    const size = Buffer.byteLength(stringifyJson(changeView(row))) + 1;
    if (current && bytes + size > MAX_PAYLOAD_BYTES) {
      ranges.push(current);
      current = null;
      bytes = overhead;
    }
    current = current ? [current[0], row.id] : [row.id, row.id];
    bytes += size;
  }
  if (current) ranges.push(current);
  return ranges;
}

/** One message row per message, and one pending delivery of it to each endpoint, due at once. */
function enqueue(
  store: MirrorDatabase,
  run: RunRow,
  messages: Iterable<OutboxMessage>,
  urls: readonly string[],
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
      run.id,
      now,
      message.body,
    ).lastInsertRowid;
    endpointIds ??= urls.map((url) => endpointId(store, url, now));
    for (const endpoint of endpointIds) insertDelivery.run(messageId, endpoint, now, now);
  }
}

/** The endpoint row of a URL, created on first use. */
function endpointId(store: MirrorDatabase, url: string, now = new Date().toISOString()): number {
  store.sqlite
    .prepare('insert into webhook_endpoints (url, created_at) values (?, ?) on conflict (url) do nothing')
    .run(url, now);
  return store.sqlite.prepare('select id from webhook_endpoints where url = ?').pluck().get(url) as number;
}
