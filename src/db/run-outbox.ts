import { CHANGE_ROWS_SQL, changeRowsOf } from './change-columns.js';
import { subjectsOf, versionBodies } from './change-reads.js';
import { entriesOfChanges, mirrorPathReader, streakSinceOf } from './commit-plans.js';
import { mediaShasAt } from './media-reads.js';
import { FIRST_LISTING_RUN_SQL } from './first-listing.js';
import { enqueue } from './outbox-enqueue.js';
import type { OutboxFacts, OutboxPlan } from './run-commit.js';
import { runById } from './run-reads.js';
import type { ChangeRow } from './schema.js';
import type { SqlPort } from './sql-port.js';

// A run's messages, once for both dialects, inside the transaction that records the run. The
// composers read their facts synchronously, so everything they may read is read first: the run's
// changes, the entry texts their coworkers' names are in, and (a run with changes only) the files
// held as of the run, for thumbnails.

/** The last succeeded run's end before run `?`: the snapshot still served. */
const SERVING_SINCE_SQL = `select finished_at from runs where id < ? and status = 'succeeded' order by id desc limit 1`;

/** The failed and succeeded runs up to run `?`, newest first, from the last success before it on. */
const STREAK_SQL = `select id, status, started_at from runs
  where id <= ? and status in ('failed', 'succeeded')
    and id >= coalesce((select max(id) from runs where id < ? and status = 'succeeded'), 0)
  order by id desc`;

/**
 * Writes the messages each plan composes for run `runId`, and one pending delivery of each to every
 * URL of its plan, due at once. Runs inside the transaction that records the run: the outbox rows
 * then exist exactly when the run does. The facts are read once for all the plans.
 */
export async function writeRunOutboxes(
  tx: SqlPort,
  runId: number,
  plans: readonly (OutboxPlan | null | undefined)[],
): Promise<void> {
  const wanted = plans.filter((plan): plan is OutboxPlan => plan != null && plan.urls.length > 0);
  if (wanted.length === 0) return;
  const facts = await runFacts(tx, runId);
  if (facts === null) return;
  for (const plan of wanted)
    await enqueue(tx, runId, [...plan.messages(facts)], plan.urls, plan.channel ?? 'webhook');
}

/** What run `runId`'s messages read, all of it read now; null when there is no such run. */
async function runFacts(tx: SqlPort, runId: number): Promise<OutboxFacts | null> {
  const run = await runById(tx, runId);
  if (run === undefined) return null;
  const changes = changeRowsOf(await tx.rows(`${CHANGE_ROWS_SQL} where c.run_id = ? order by c.id`, [runId]));
  const bodies = await versionBodies(tx, changes);
  const shas = changes.length === 0 ? [] : await mediaShasAt(tx, runId);
  const [servingSince = null] = await tx.values<string | null>(SERVING_SINCE_SQL, [runId]);
  const streak = await tx.rows<[number, string, string]>(STREAK_SQL, [runId, runId]);
  const [firstListingRun = null] = await tx.values<number>(FIRST_LISTING_RUN_SQL);
  return {
    run,
    firstListingRun,
    failedBefore: streak.filter(([id, status]) => id < runId && status === 'failed').length,
    changes: () => changes,
    changesBetween: (fromId, toId) =>
      changes.slice(firstAtLeast(changes, fromId), firstAtLeast(changes, toId + 1)),
    subjectsOf: (rows) => subjectsOf(rows, bodies),
    servingSince,
    streakSince: streakSinceOf(runId, streak),
    entriesOf: (rows) => entriesOfChanges(rows, (row) => bodies.get(row.id)),
    mirrorPathOf: mirrorPathReader(() => shas),
  };
}

/** The index of the first of `rows` (sorted by id) whose id is at least `id`: a first sync's parts each ask a range. */
function firstAtLeast(rows: readonly ChangeRow[], id: number): number {
  let [low, high] = [0, rows.length];
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((rows[mid]?.id ?? Infinity) < id) low = mid + 1;
    else high = mid;
  }
  return low;
}
