import { changesFinishedWithinSql, PG_CHANGE_ROWS_SQL } from '../change-columns.js';
import { NOTIFY_ENDPOINT_PREFIX } from '../endpoint-keys.js';
import type { DigestPlan } from '../run-commit.js';
import type { ChangeRow } from '../schema.js';
import { ADVISORY_NAMESPACE, DIGEST_LOCK } from './advisory-keys.js';
import type { PgContext } from './context.js';
import { endpointId, firstListingRun, newMessageIds } from './outbox.js';
import { changeSubjects } from './pages.js';
import { PortNotificationOutbox } from '../notify-outbox.js';
import { pgOutboxPort } from './sql-port.js';
import { rows, run, transaction, type Tx } from './sql.js';

// The digest of the notification outbox on PostgreSQL: the twin of src/db/sqlite/notify-outbox.ts.

/** The notification rows of the outbox on PostgreSQL (src/db/notify-outbox.ts), and the digest. */
export class PgNotificationOutbox extends PortNotificationOutbox {
  readonly #ctx: PgContext;

  constructor(ctx: PgContext) {
    super(pgOutboxPort(ctx.pool));
    this.#ctx = ctx;
  }

  /**
   * Writes the digest of `plan`'s period to each target that has none yet, in one transaction: the
   * key `digest_<targetId>_<period end>` (the message's unique webhook_id) makes a second writer,
   * another instance or a later pass, a no-op; the writers take turns on an advisory lock, so the
   * second sees the first's rows rather than failing on them. Answers the deliveries written.
   */
  async enqueueDigest(plan: DigestPlan): Promise<number> {
    return transaction(this.#ctx.pool, async (tx) => {
      await run(tx.client, 'select pg_advisory_xact_lock($1, $2)', [ADVISORY_NAMESPACE, DIGEST_LOCK]);
      return writeDigest(tx, plan);
    });
  }
}

const digestKey = (targetId: string, to: string) => `digest_${targetId}_${to}`;

/** The period's digest for each target of `plan` that has none yet; the deliveries written. */
async function writeDigest(tx: Tx, plan: DigestPlan): Promise<number> {
  const written = await rows<{ webhookId: string }>(
    tx.client,
    'select webhook_id as "webhookId" from webhook_messages where webhook_id = any($1::text[])',
    [plan.targetIds.map((id) => digestKey(id, plan.to))],
  );
  const have = new Set(written.map((r) => r.webhookId));
  const missing = plan.targetIds.filter((id) => !have.has(digestKey(id, plan.to)));
  if (missing.length === 0) return 0;
  // The composer reads synchronously: the period's changes and their subjects are read first.
  const changes = await rows<ChangeRow>(
    tx.client,
    `${PG_CHANGE_ROWS_SQL} where ${changesFinishedWithinSql('c', 'r.finished_at >= $1 and r.finished_at < $2')} order by c.id`,
    [plan.from, plan.to],
  );
  const subjects = await changeSubjects(tx.client, changes);
  const message = plan.message({
    changes: () => changes,
    firstListingRun: await firstListingRun(tx.client),
    subjectsOf: (asked) =>
      new Map(
        asked.flatMap((row) => {
          const subject = subjects.get(row.id);
          return subject === undefined ? [] : [[row.id, subject] as const];
        }),
      ),
  });
  if (message === null) return 0;
  const runId = changes.length === 0 ? null : Math.max(...changes.map((row) => row.runId));
  const now = new Date().toISOString();
  for (const targetId of missing) {
    const endpoint = await endpointId(tx, `${NOTIFY_ENDPOINT_PREFIX}${targetId}`, 'notify', now);
    const [messageId] = await newMessageIds(tx, [
      [digestKey(targetId, plan.to), message.type, runId, now, message.body],
    ]);
    await run(
      tx.client,
      `insert into webhook_deliveries (message_id, endpoint_id, status, next_attempt_at, created_at)
       values ($1, $2, 'pending', $3, $3)`,
      [messageId, endpoint, now],
    );
  }
  return missing.length;
}
