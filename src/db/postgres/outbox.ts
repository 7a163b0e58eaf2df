import type pg from 'pg';
import type { ChangeSubject } from '../change-batches.js';
import type { OutboxFacts, OutboxPlan } from '../run-commit.js';
import type { ChangeRow } from '../schema.js';
import { enqueue, firstListingRun, type DigestTransaction } from '../outbox-enqueue.js';
import { ADVISORY_NAMESPACE, DIGEST_LOCK } from './advisory-keys.js';
import { pgSqlPort } from './sql-port.js';
import { entriesOfChanges, entryOfChange, mirrorPathReader, streakSinceOf } from '../commit-plans.js';
import { mediaShasAt } from './media.js';
import { changeSubjects, subjectOf } from './pages.js';
import { runs } from './schema.js';
import { one, run, transaction, tuples, type Tx } from './sql.js';
import { eq } from 'drizzle-orm';

// The facts of a run's messages on PostgreSQL (src/db/sqlite/outbox.ts reads SQLite's lazily).
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
  const port = pgSqlPort(tx.client);
  const found = (await tx.db.select().from(runs).where(eq(runs.id, runId)))[0];
  if (!found) return;
  await loadMissingBodies(tx, runId, memory);
  const shas = await loadMediaShas(tx, runId, memory);
  const facts: OutboxFacts = {
    run: found,
    firstListingRun: await firstListingRun(port),
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
  await enqueue(port, runId, [...plan.messages(facts)], plan.urls, plan.channel ?? 'webhook');
}

/**
 * A digest writer's transaction on PostgreSQL: one pooled connection, the writers taking turns on an
 * advisory lock, so the second sees the first's rows rather than failing on them.
 */
export function pgDigestTransaction(pool: pg.Pool): DigestTransaction {
  return (work) =>
    transaction(pool, async (tx) => {
      await run(tx.client, 'select pg_advisory_xact_lock($1, $2)', [ADVISORY_NAMESPACE, DIGEST_LOCK]);
      return work(pgSqlPort(tx.client), (rows) => changeSubjects(tx.client, rows));
    });
}
