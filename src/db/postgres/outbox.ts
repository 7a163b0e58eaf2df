import type { ChangeSubject } from '../page-queries.js';
import type { OutboxFacts, OutboxMessage, OutboxPlan } from '../run-commit.js';
import type { OutboxChannel } from '../enums.js';
import type { ChangeRow } from '../schema.js';
import { newWebhookId } from '../sqlite/outbox.js';
import { insertWithIds } from './bulk.js';
import { entriesOfChanges, entryOfChange, mirrorPathReader, streakSinceOf } from '../commit-plans.js';
import { FIRST_LISTING_RUN_SQL } from '../first-listing.js';
import { mediaShasAt } from './media.js';
import { subjectOf } from './pages.js';
import { runs } from './schema.js';
import { one, tuples, type Queryable, type Tx } from './sql.js';
import { eq } from 'drizzle-orm';

// The webhook and notification outbox of a run on PostgreSQL: the twin of src/db/sqlite/outbox.ts.
// The composer reads its facts synchronously, so what it may read is gathered first: the run's
// changes as this transaction wrote them, and the entry texts their coworkers' names are in.

/** What a commit wrote that its messages read, kept in memory instead of read back. */
export interface RunMemory {
  /** The run's changes, oldest first, as stored. */
  changes: ChangeRow[];
  /** Entry texts of the versions this run wrote, by `uuid \0 slot`. */
  bodies: Map<string, string>;
  /** The [url, sha256] of the files held as of the run, once read (for thumbnails). */
  mediaShas?: [url: string, sha256: string][];
}

const keyOf = (row: Pick<ChangeRow, 'uuid' | 'slot'>): string => `${row.uuid}\u0000${row.slot}`;

/** Reads the version texts a change's subject needs that the commit did not write (kept versions). */
async function loadMissingBodies(tx: Tx, runId: number, memory: RunMemory): Promise<void> {
  const missing = [
    ...new Map(
      memory.changes
        .filter((row) => entryOfChange(row) === null && !memory.bodies.has(keyOf(row)))
        .map((row) => [keyOf(row), row]),
    ).values(),
  ];
  if (missing.length === 0) return;
  const found = await tuples<[string, number, string | null]>(
    tx.client,
    `select a.uuid, a.slot, (select v.body from versions v
                              where v.uuid = a.uuid and v.slot = a.slot and v.valid_from_run <= $3
                              order by v.valid_from_run desc limit 1)
       from unnest($1::text[], $2::int[]) as a(uuid, slot)`,
    [missing.map((r) => r.uuid), missing.map((r) => r.slot), runId],
  );
  for (const [uuid, slot, body] of found) if (body !== null) memory.bodies.set(keyOf({ uuid, slot }), body);
}

/** The store's first listing (FIRST_LISTING_RUN_SQL), or null before any. */
export async function firstListingRun(db: Queryable): Promise<number | null> {
  return (await one<{ run: number | null }>(db, FIRST_LISTING_RUN_SQL))?.run ?? null;
}

async function failedBefore(tx: Tx, runId: number): Promise<number> {
  // Failed runs since the last succeeded one: aborted runs neither extend nor break a streak.
  const row = await one<{ n: number }>(
    tx.client,
    `select count(*) as n from runs
      where id < $1 and status = 'failed'
        and id > coalesce((select max(id) from runs where id < $1 and status = 'succeeded'), 0)`,
    [runId],
  );
  return row?.n ?? 0;
}

async function servingSince(tx: Tx, runId: number): Promise<string | null> {
  const row = await one<{ at: string | null }>(
    tx.client,
    `select finished_at as at from runs where id < $1 and status = 'succeeded' order by id desc limit 1`,
    [runId],
  );
  return row?.at ?? null;
}

/** The start of the first failed run of the streak ending at `runId` (the rows from the last success on). */
async function streakSince(tx: Tx, runId: number): Promise<string | null> {
  const found = await tuples<[number, string, string]>(
    tx.client,
    `select id, status, started_at from runs
      where id <= $1 and status in ('failed', 'succeeded')
        and id >= coalesce((select max(id) from runs where id < $1 and status = 'succeeded'), 0)
      order by id desc`,
    [runId],
  );
  return streakSinceOf(runId, found);
}

/**
 * The files held as of the run, read inside its transaction (its own media rows are written first).
 * Only a run with changes has thumbnails to show: the others skip the read.
 */
async function loadMediaShas(tx: Tx, runId: number, memory: RunMemory): Promise<[string, string][]> {
  if (memory.changes.length === 0) return [];
  memory.mediaShas ??= await mediaShasAt(tx.client, runId);
  return memory.mediaShas;
}

/** The rows with ids in [fromId, toId] of rows sorted by id. */
function between(rows: ChangeRow[], fromId: number, toId: number): ChangeRow[] {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((rows[mid]?.id ?? Infinity) < fromId) low = mid + 1;
    else high = mid;
  }
  const out: ChangeRow[] = [];
  for (let i = low; i < rows.length && (rows[i]?.id ?? Infinity) <= toId; i++) out.push(rows[i] as ChangeRow);
  return out;
}

function subjectsFrom(memory: RunMemory): OutboxFacts['subjectsOf'] {
  return (rows) => {
    const out = new Map<number, ChangeSubject>();
    for (const row of rows)
      out.set(row.id, subjectOf(entryOfChange(row) ?? memory.bodies.get(keyOf(row)) ?? null));
    return out;
  };
}

/**
 * Writes the messages `plan` composes for run `runId`, and one pending delivery of each to every
 * URL, due at once, inside the transaction that records the run.
 */
export async function writeOutbox(tx: Tx, runId: number, plan: OutboxPlan, memory: RunMemory): Promise<void> {
  if (plan.urls.length === 0) return;
  const found = (await tx.db.select().from(runs).where(eq(runs.id, runId)))[0];
  if (!found) return;
  await loadMissingBodies(tx, runId, memory);
  const shas = await loadMediaShas(tx, runId, memory);
  const facts: OutboxFacts = {
    run: found,
    firstListingRun: await firstListingRun(tx.client),
    failedBefore: await failedBefore(tx, runId),
    changes: () => memory.changes,
    changesBetween: (fromId, toId) => between(memory.changes, fromId, toId),
    subjectsOf: subjectsFrom(memory),
    servingSince: await servingSince(tx, runId),
    streakSince: await streakSince(tx, runId),
    // The memory holds the version each change's coworker had at this run (loadMissingBodies).
    entriesOf: (rows) => entriesOfChanges(rows, (row) => memory.bodies.get(keyOf(row))),
    mirrorPathOf: mirrorPathReader(() => shas),
  };
  await enqueue(tx, runId, [...plan.messages(facts)], plan.urls, plan.channel ?? 'webhook');
}

/** One message row per message, and one pending delivery of it to each endpoint, due at once. */
async function enqueue(
  tx: Tx,
  runId: number,
  messages: OutboxMessage[],
  urls: readonly string[],
  channel: OutboxChannel,
): Promise<void> {
  if (messages.length === 0) return;
  const now = new Date().toISOString();
  const endpointIds: number[] = [];
  for (const url of urls) endpointIds.push(await endpointId(tx, url, channel, now));
  const messageIds = await newMessageIds(
    tx,
    messages.map((m) => [newWebhookId(), m.type, runId, now, m.body]),
  );
  await insertWithIds(
    tx.client,
    'webhook_deliveries',
    [
      { name: 'message_id', type: 'bigint' },
      { name: 'endpoint_id', type: 'bigint' },
      { name: 'status', type: 'text' },
      { name: 'next_attempt_at', type: 'text' },
      { name: 'created_at', type: 'text' },
    ],
    messageIds.flatMap((messageId) =>
      endpointIds.map((endpoint) => [messageId, endpoint, 'pending', now, now]),
    ),
  );
}

/** The endpoint row of a URL (an endpoint key), created on first use with the channel its rows go to. */
export async function endpointId(tx: Tx, url: string, channel: OutboxChannel, now: string): Promise<number> {
  // Inserted first, as SQLite's store does: a conflicting insert spends an id on both (SQLite's
  // AUTOINCREMENT, PostgreSQL's sequence), so the ids of endpoints created later stay alike. A
  // digest writer and a run's commit racing to create one target's row: the loser's insert waits
  // for the winner's commit, does nothing, and reads the winner's row.
  const inserted = await one<{ id: number }>(
    tx.client,
    `insert into webhook_endpoints (url, channel, created_at) values ($1, $2, $3)
     on conflict (url) do nothing returning id`,
    [url, channel, now],
  );
  if (inserted) return inserted.id;
  const existing = await one<{ id: number }>(tx.client, 'select id from webhook_endpoints where url = $1', [
    url,
  ]);
  return existing?.id ?? 0;
}

/** Inserts webhook_messages rows ([webhook_id, type, run_id, created_at, body]); their ids, in order. */
export function newMessageIds(tx: Tx, messageRows: readonly (readonly unknown[])[]): Promise<number[]> {
  return insertWithIds(tx.client, 'webhook_messages', MESSAGE_COLUMNS, messageRows);
}

const MESSAGE_COLUMNS = [
  { name: 'webhook_id', type: 'text' },
  { name: 'type', type: 'text' },
  { name: 'run_id', type: 'bigint' },
  { name: 'created_at', type: 'text' },
  { name: 'body', type: 'text' },
];
