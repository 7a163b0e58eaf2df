import { loadConfig } from '../../src/config/load-config.js';
import type { MirrorDatabase } from '../../src/db/open.js';
import { transactionPortOf } from '../../src/db/sqlite/sql-port.js';
import { writeRunOutboxes } from '../../src/db/run-outbox.js';
import { succeededRunOutbox } from '../../src/webhooks/outbox.js';

// No vitest here: the webhook benchmark records its runs the same way.

let counter = 0;

/** Every event type, `sync.failed` after 3 failed runs: the defaults. */
const webhookDefaults = loadConfig({}).webhooks;

/**
 * Records a succeeded run that added one coworker, with its outbox, in one transaction written
 * straight into the schema (no listing, no stage; the change holds its entry, as a release's rows
 * do): the fast way to make many notifications. commitRunWithChange (store-runs.ts) records such
 * a run through the sync's own commit, on any store.
 */
export function recordRunWithChange(store: MirrorDatabase, urls: readonly string[]): Promise<number> {
  return transactionPortOf(store.sqlite).write(async (tx) => {
    const now = new Date().toISOString();
    const runId = Number(
      store.sqlite
        .prepare(
          `insert into runs (status, started_at, finished_at, upstream, added) values ('succeeded', ?, ?, ?, 1)`,
        )
        .run(now, now, 'http://upstream.invalid').lastInsertRowid,
    );
    const uuid = (++counter).toString(36).padStart(32, '0');
    store.sqlite
      .prepare(`insert into changes (run_id, uuid, slot, kind, new_value) values (?, ?, 0, 'added', ?)`)
      .run(runId, uuid, JSON.stringify({ uuid, name: `Person ${counter}` }));
    const plan = succeededRunOutbox({ ...webhookDefaults, urls }, store.endpointKeys);
    await writeRunOutboxes(tx, runId, [plan]);
    return runId;
  });
}
