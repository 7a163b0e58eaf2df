import { randomBytes } from 'node:crypto';
import type { OutboxChannel } from './enums.js';
import { FIRST_LISTING_RUN_SQL } from './first-listing.js';
import { CHANGE_ROWS_SQL, changeRowsOf, changesFinishedWithinSql } from './change-columns.js';
import { subjectsOf, versionBodies } from './change-reads.js';
import { ADVISORY_NAMESPACE, DIGEST_LOCK } from './postgres/advisory-keys.js';
import { NOTIFY_ENDPOINT_PREFIX } from './endpoint-keys.js';
import type { DigestPlan, OutboxMessage } from './run-commit.js';
import { columns } from './port-shapes.js';
import type { SqlPort, TransactionPort } from './sql-port.js';

// The outbox's rows as a run or a digest writes them, once for both dialects over the port, inside
// the writer's transaction: a message, its deliveries and their endpoints exist together or not.

/** A fresh `webhook-id`: random, so two mirrors of one upstream never collide at a receiver. */
function newWebhookId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/**
 * The endpoint row of a URL (an endpoint key), created on first use with the channel its rows go to.
 * Inserted first: a conflicting insert spends an id on both databases (SQLite's AUTOINCREMENT,
 * PostgreSQL's sequence), so the ids of endpoints created later stay alike. A digest writer and a
 * run's commit racing to create one target's row on PostgreSQL: the loser's insert waits for the
 * winner's commit, does nothing, and reads the winner's row.
 */
async function endpointId(tx: SqlPort, url: string, channel: OutboxChannel, now: string): Promise<number> {
  await tx.run(
    'insert into webhook_endpoints (url, channel, created_at) values (?, ?, ?) on conflict (url) do nothing',
    [url, channel, now],
  );
  // The row exists: this transaction inserted it, or a committed one had.
  const [id] = await tx.values<number>('select id from webhook_endpoints where url = ?', [url]);
  return id as number;
}

const MESSAGE_COLUMNS = columns('webhook_id text, type text, run_id bigint, created_at text, body text');
const DELIVERY_COLUMNS = columns(
  'message_id bigint, endpoint_id bigint, status text, next_attempt_at text, created_at text',
);

/**
 * Inserts webhook_messages rows ([webhook_id, type, run_id, created_at, body]) and one pending
 * delivery of each to the endpoint of each of `urls` (made first if need be), due at `now`.
 */
async function insertMessages(
  tx: SqlPort,
  messageRows: readonly (readonly unknown[])[],
  urls: readonly string[],
  channel: OutboxChannel,
  now: string,
): Promise<void> {
  const endpointIds: number[] = [];
  for (const url of urls) endpointIds.push(await endpointId(tx, url, channel, now));
  const messageIds = await tx.insertWithIds('webhook_messages', MESSAGE_COLUMNS, messageRows);
  const deliveries = messageIds.flatMap((id) =>
    endpointIds.map((endpoint) => [id, endpoint, 'pending', now, now]),
  );
  await tx.insert('webhook_deliveries', DELIVERY_COLUMNS, deliveries);
}

/**
 * One message row per message of run `runId`, and one pending delivery of it to each endpoint, due
 * at once. No message, no row: an endpoint is created only for a message it is to get.
 */
export async function enqueue(
  tx: SqlPort,
  runId: number,
  messages: readonly OutboxMessage[],
  urls: readonly string[],
  channel: OutboxChannel,
): Promise<void> {
  if (messages.length === 0) return;
  const now = new Date().toISOString();
  const rows = messages.map((m) => [newWebhookId(), m.type, runId, now, m.body]);
  await insertMessages(tx, rows, urls, channel, now);
}

/** The changes of a digest's period: of the runs that finished within it (runs commit in order). */
const DIGEST_RUNS = changesFinishedWithinSql('c', 'r.finished_at >= ? and r.finished_at < ?');

const digestKey = (targetId: string, to: string) => `digest_${targetId}_${to}`;

/**
 * Writes the digest of `plan`'s period to each target that has none yet, in one transaction: the
 * key `digest_<targetId>_<period end>` (the message's unique webhook_id) makes a second writer,
 * another instance or a later pass, a no-op. Answers the deliveries written. SQLite's writers take
 * turns on its write lock; PostgreSQL's on an advisory lock, so the second sees the first's rows
 * rather than failing on them.
 */
export function enqueueDigest(port: TransactionPort, plan: DigestPlan): Promise<number> {
  return port.write(async (tx) => {
    if (tx.dialect === 'postgres')
      await tx.run('select pg_advisory_xact_lock(?, ?)', [ADVISORY_NAMESPACE, DIGEST_LOCK]);
    const wanted = plan.targetIds.map((id) => digestKey(id, plan.to));
    const keys = tx.oneOf('webhook_id', 'text', wanted);
    const have = new Set(
      await tx.values<string>(`select webhook_id from webhook_messages where ${keys.sql}`, [keys.param]),
    );
    const missing = plan.targetIds.filter((id) => !have.has(digestKey(id, plan.to)));
    if (missing.length === 0) return 0;
    // The composer reads synchronously: the period's changes and their subjects are read first.
    const changes = changeRowsOf(
      await tx.rows(`${CHANGE_ROWS_SQL} where ${DIGEST_RUNS} order by c.id`, [plan.from, plan.to]),
    );
    const bodies = await versionBodies(tx, changes);
    const [firstListingRun = null] = await tx.values<number>(FIRST_LISTING_RUN_SQL);
    const message = plan.message({
      changes: () => changes,
      firstListingRun,
      subjectsOf: (rows) => subjectsOf(rows, bodies),
    });
    if (message === null) return 0;
    let runId: number | null = null;
    for (const row of changes) if (runId === null || row.runId > runId) runId = row.runId;
    const now = new Date().toISOString();
    for (const targetId of missing) {
      const row = [digestKey(targetId, plan.to), message.type, runId, now, message.body];
      await insertMessages(tx, [row], [`${NOTIFY_ENDPOINT_PREFIX}${targetId}`], 'notify', now);
    }
    return missing.length;
  });
}
