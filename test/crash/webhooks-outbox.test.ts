import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
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
function expectOutboxMatchesRuns(store: MirrorDatabase, when: string): void {
  const runs = store.sqlite.prepare('select id, status from runs order by id').all() as {
    id: number;
    status: string;
  }[];
  for (const run of runs) {
    const changeIds = store.sqlite
      .prepare('select id from changes where run_id = ? order by id')
      .pluck()
      .all(run.id) as number[];
    const bodies = store.sqlite
      .prepare('select body from webhook_messages where run_id = ? order by id')
      .pluck()
      .all(run.id) as string[];
    const carried = bodies.flatMap((body) => {
      const payload = JSON.parse(body) as { type: string; data: { changes: { id: number }[] } };
      expect(payload.type, `${when}: run ${run.id}`).toBe('coworkers.changed');
      return payload.data.changes.map((c) => c.id);
    });
    const expected = run.status === 'succeeded' ? changeIds : [];
    expect(carried, `${when}: run ${run.id} (${run.status}) notified exactly its changes`).toEqual(expected);
  }
  const orphans = store.sqlite
    .prepare(
      `select count(*) from webhook_messages m
        where (select count(*) from webhook_deliveries d where d.message_id = m.id) <> 1`,
    )
    .pluck()
    .get();
  expect(orphans, `${when}: one delivery per message`).toBe(0);
}

describe('crash safety of the webhook outbox', () => {
  it('a sync SIGKILLed anywhere never loses nor invents a notification', async () => {
    const dbFile = join(tempDir(), 'mirror.db');
    const upstream = await simulatedUpstream({ seed: 4_242, count: 300 });
    upstream.faults.set({ latency: 2 });
    for (const [i, plan] of plans.entries()) {
      for (let m = 0; m < 3; m++) upstream.data.mutateRandomly();
      const child = spawnChildSync(upstream.url, dbFile, HOOK);
      const line = await child.waitFor(plan.at);
      child.kill();
      const exit = await child.exited;
      expect(exit.signal, `kill ${i + 1} (${plan.name}) ${line ? 'landed' : 'missed'}\n${child.stderr}`).toBe(
        'SIGKILL',
      );
      const store = openDatabase(dbFile);
      try {
        expectOutboxMatchesRuns(store, `after kill ${i + 1} (${plan.name})`);
        // The next run completes and notifies what changed since the last committed run.
        upstream.faults.clear();
        await runSync(syncConfig(upstream.url, webhooks), { store, logger: silentLogger() });
        upstream.faults.set({ latency: 2 });
        expectOutboxMatchesRuns(store, `after the recovery of kill ${i + 1}`);
      } finally {
        store.close();
      }
    }
  });
});
