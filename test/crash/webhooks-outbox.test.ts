import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { STORE_KINDS, usePostgres } from '../helpers/postgres.js';
import { postgresCrashDatabase, sqliteCrashDatabase, type CrashStore } from './crash-store.js';
import { spawnChildSync, type ChildLine } from './sync-child.js';

const HOOK = 'http://127.0.0.1:9/hook';
/** Every event type, `sync.failed` after 3 failed runs: the defaults. */
const webhooks = { WEBHOOK_URLS: HOOK };

/** Where each kill lands: in or right after the commit's transaction, mid-crawl, or after the run. */
const plans: { name: string; at: (line: ChildLine) => boolean }[] = [
  { name: 'inside the commit transaction', at: (l) => l.marker === 'txn' && l.n === 2 },
  { name: 'right after the commit', at: (l) => l.marker === 'txn-end' && l.n === 2 },
  { name: 'mid-crawl', at: (l) => l.marker === 'progress' && (l.done ?? 0) >= 2 },
  { name: 'inside the run-start transaction', at: (l) => l.marker === 'txn' && l.n === 1 },
  { name: 'after the run', at: (l) => l.marker === 'done' },
  { name: 'inside the commit transaction, again', at: (l) => l.marker === 'txn' && l.n === 2 },
];

/**
 * The outbox promise, checked on the file as a crash left it: every succeeded run with changes has
 * its coworkers.changed parts carrying each of its changes exactly once, and one delivery per part;
 * no other run has any message.
 */
async function expectOutboxMatchesRuns(db: CrashStore, when: string): Promise<void> {
  const runs = await db.all<{ id: number; status: string }>('select id, status from runs order by id');
  for (const run of runs) {
    const changeIds = (
      await db.all<{ id: number }>('select id from changes where run_id = ? order by id', run.id)
    ).map((r) => r.id);
    const bodies = (
      await db.all<{ body: string }>('select body from webhook_messages where run_id = ? order by id', run.id)
    ).map((r) => r.body);
    const carried = bodies.flatMap((body) => {
      const payload = JSON.parse(body) as { type: string; data: { changes: { id: number }[] } };
      expect(payload.type, `${when}: run ${run.id}`).toBe('coworkers.changed');
      return payload.data.changes.map((c) => c.id);
    });
    const expected = run.status === 'succeeded' ? changeIds : [];
    expect(carried, `${when}: run ${run.id} (${run.status}) notified exactly its changes`).toEqual(expected);
  }
  const [orphans] = await db.all<{ n: number }>(
    `select count(*) as n from webhook_messages m
      where (select count(*) from webhook_deliveries d where d.message_id = m.id) <> 1`,
  );
  expect(orphans?.n, `${when}: one delivery per message`).toBe(0);
}

describe.each(STORE_KINDS)('crash safety of the webhook outbox on %s', (kind) => {
  const pg = kind === 'postgres' ? usePostgres() : null;

  it('a sync SIGKILLed anywhere never loses nor invents a notification', async () => {
    const database = pg === null ? sqliteCrashDatabase() : await postgresCrashDatabase(pg.server);
    const upstream = await simulatedUpstream({ seed: 4_242, count: 300 });
    upstream.faults.set({ latency: 2 });
    for (const [i, plan] of plans.entries()) {
      for (let m = 0; m < 3; m++) upstream.data.mutateRandomly();
      const child = spawnChildSync(upstream.url, database.arg, HOOK);
      const line = await child.waitFor(plan.at);
      child.kill();
      const exit = await child.exited;
      expect(exit.signal, `kill ${i + 1} (${plan.name}) ${line ? 'landed' : 'missed'}\n${child.stderr}`).toBe(
        'SIGKILL',
      );
      await database.afterKill(child.pid);
      const store = await database.open();
      try {
        await expectOutboxMatchesRuns(store, `after kill ${i + 1} (${plan.name})`);
        // The next run completes and notifies what changed since the last committed run.
        upstream.faults.clear();
        await runSync(syncConfig(upstream.url, webhooks), { store: store.store, logger: silentLogger() });
        upstream.faults.set({ latency: 2 });
        await expectOutboxMatchesRuns(store, `after the recovery of kill ${i + 1}`);
      } finally {
        await store.close();
      }
    }
  });
});
