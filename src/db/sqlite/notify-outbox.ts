import { NOTIFY_ENDPOINT_PREFIX } from '../endpoint-keys.js';
import type { DigestPlan } from '../run-commit.js';
import { CHANGE_ROWS_SQL, changesFinishedWithinSql } from '../change-columns.js';
import { changeSubjects } from '../page-queries.js';
import type { ChangeRow } from '../schema.js';
import type { SqliteHandle } from './handle.js';
import { endpointId, firstListingRun } from './outbox.js';
import { PortNotificationOutbox } from '../notify-outbox.js';
import { outboxPortOf } from './sql-port.js';

/**
 * The notification rows of the outbox on SQLite (src/db/notify-outbox.ts), and the digest, whose
 * composer reads the period's changes as it goes.
 */
export class SqliteNotificationOutbox extends PortNotificationOutbox {
  readonly #store: SqliteHandle;

  constructor(store: SqliteHandle) {
    super(outboxPortOf(store.sqlite));
    this.#store = store;
  }

  /**
   * Writes the digest of `plan`'s period to each target that has none yet, in one transaction: the
   * key `digest_<targetId>_<period end>` (the message's unique webhook_id) makes a second writer,
   * another instance or a later pass, a no-op. Answers the deliveries written.
   */
  enqueueDigest(plan: DigestPlan): Promise<number> {
    return Promise.resolve(this.#store.sqlite.transaction(() => writeDigest(this.#store, plan)).immediate());
  }
}

/** The changes of a digest's period: of the runs that finished within it (runs commit in order). */
const DIGEST_RUNS = changesFinishedWithinSql('c', 'r.finished_at >= ? and r.finished_at < ?');

const digestKey = (targetId: string, to: string) => `digest_${targetId}_${to}`;

function writeDigest(store: SqliteHandle, plan: DigestPlan): number {
  const exists = store.sqlite.prepare('select 1 from webhook_messages where webhook_id = ?').pluck();
  const missing = plan.targetIds.filter((id) => exists.get(digestKey(id, plan.to)) === undefined);
  if (missing.length === 0) return 0;
  const changes = store.sqlite.prepare(`${CHANGE_ROWS_SQL} where ${DIGEST_RUNS} order by c.id`);
  const message = plan.message({
    changes: () => changes.iterate(plan.from, plan.to) as IterableIterator<ChangeRow>,
    firstListingRun: firstListingRun(store),
    subjectsOf: (rows) => changeSubjects(store, rows),
  });
  if (message === null) return 0;
  const runId = store.sqlite
    .prepare(`select max(c.run_id) from changes c where ${DIGEST_RUNS}`)
    .pluck()
    .get(plan.from, plan.to) as number;
  const now = new Date().toISOString();
  for (const targetId of missing) {
    const url = `${NOTIFY_ENDPOINT_PREFIX}${targetId}`;
    endpointId(store, url, 'notify', now);
    const messageId = store.sqlite
      .prepare(
        'insert into webhook_messages (webhook_id, type, run_id, created_at, body) values (?, ?, ?, ?, ?)',
      )
      .run(digestKey(targetId, plan.to), message.type, runId, now, message.body).lastInsertRowid;
    store.sqlite
      .prepare(
        `insert into webhook_deliveries (message_id, endpoint_id, status, next_attempt_at, created_at)
         values (?, (select id from webhook_endpoints where url = ?), 'pending', ?, ?)`,
      )
      .run(messageId, url, now, now);
  }
  return missing.length;
}
