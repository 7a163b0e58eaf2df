import type { RunStart, Store } from '../../src/db/store.js';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { RunRow } from '../../src/db/schema.js';
import { MirrorError } from '../../src/errors.js';
import { describePostgres, STORE_KINDS, storeOpener, usePostgres } from '../helpers/postgres.js';
import { openPgStoreAt } from '../helpers/postgres.js';
import { tempDatabase } from '../helpers/temp-db.js';

// One run per tick of SYNC_CRON across every instance: a run's row claims its tick, and a second
// claim of that tick is refused by the store (runs_scheduled_for_idx), whichever instance is second.

const UPSTREAM = 'http://up.example/';
const T1 = '2026-11-22T10:00:00.000Z';
const T2 = '2026-11-22T10:00:10.000Z';
const tick = (scheduledFor: string): RunStart => ({ trigger: 'schedule', scheduledFor });

/** What a refused beginRun rejected with (a test failure when it was not refused). */
async function refusal(attempt: Promise<RunRow>): Promise<MirrorError> {
  const outcome = await attempt.then(
    (row) => new Error(`run ${row.id} began`),
    (error: unknown) => error,
  );
  if (!(outcome instanceof MirrorError)) throw outcome;
  return outcome;
}

/** Ends a run as failed and frees its lock, as a run that failed does. */
async function endFailed(store: Store, runId: number): Promise<void> {
  await store.endRun({ runId, status: 'failed', error: { code: 'UPSTREAM_NETWORK', message: 'down' } });
  await store.releaseRun(runId);
}

describe.each(STORE_KINDS)('one run per tick on %s', (kind) => {
  const stores = storeOpener(kind);

  it('the second claim of a tick is refused TICK_SERVED naming the first run: while it holds the lock, and after it failed', async () => {
    const a = await stores.open();
    const b = await stores.another(a);
    const first = await a.beginRun(UPSTREAM, tick(T1));
    expect([first.trigger, first.scheduledFor]).toEqual(['schedule', T1]);
    const served = {
      code: 'TICK_SERVED',
      details: { tick: T1, runId: first.id, pid: process.pid, host: hostname(), startedAt: first.startedAt },
    };
    // The first run holds the lock, but the tick is what refuses the second: not SYNC_LOCKED.
    expect(await refusal(b.beginRun(UPSTREAM, tick(T1)))).toMatchObject({
      ...served,
      details: { ...served.details, status: 'running' },
    });
    // A failed run served its tick: another instance does not crawl it again.
    await endFailed(a, first.id);
    const afterFailure = await refusal(b.beginRun(UPSTREAM, tick(T1)));
    expect(afterFailure).toMatchObject({ ...served, details: { ...served.details, status: 'failed' } });
    expect(afterFailure.message).toBe(
      `the tick of ${T1} was already served by run ${first.id} (${hostname()}/${process.pid}, ` +
        `started ${first.startedAt}, failed)`,
    );
    // The next tick, and runs no tick started, go ahead.
    const next = await b.beginRun(UPSTREAM, tick(T2));
    await b.releaseRun(next.id);
    const admin = await a.beginRun(UPSTREAM, { trigger: 'admin', scheduledFor: null });
    await a.releaseRun(admin.id);
    const bare = await b.beginRun(UPSTREAM);
    await b.releaseRun(bare.id);
    const runs = await a.listRuns({ limit: 10 });
    expect(runs.map((r) => [r.id, r.trigger, r.scheduledFor])).toEqual([
      [bare.id, 'command', null],
      [admin.id, 'admin', null],
      [next.id, 'schedule', T2],
      [first.id, 'schedule', T1],
    ]);
    expect(await b.runOfTick(T1)).toMatchObject({ id: first.id, status: 'failed' });
    expect(await b.runOfTick('2026-11-22T10:00:20.000Z')).toBeUndefined();
    expect(await b.latestRunStart()).toBe(bare.startedAt);
  });

  it('claims of one tick made at once by two instances: exactly one run begins, the other is told TICK_SERVED', async () => {
    const a = await stores.open();
    const b = await stores.another(a);
    for (let second = 0; second < 5; second++) {
      const at = `2026-11-22T11:00:0${second}.000Z`;
      const outcomes = await Promise.allSettled([
        a.beginRun(UPSTREAM, tick(at)),
        b.beginRun(UPSTREAM, tick(at)),
      ]);
      const begun = outcomes.flatMap((o, i) =>
        o.status === 'fulfilled' ? [{ row: o.value, store: [a, b][i] }] : [],
      );
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
      expect(begun).toHaveLength(1);
      const [{ row, store } = { row: undefined, store: undefined }] = begun;
      expect(refused).toEqual([
        expect.objectContaining({
          code: 'TICK_SERVED',
          details: expect.objectContaining({ runId: row?.id }) as unknown,
        }),
      ]);
      if (row && store) await endFailed(store, row.id);
    }
    expect((await a.listRuns({ limit: 10 })).map((r) => r.scheduledFor)).toEqual(
      [4, 3, 2, 1, 0].map((s) => `2026-11-22T11:00:0${s}.000Z`),
    );
  });
});

describe('the key under the rule, whatever the code above it', () => {
  it('SQLite: a second row of one tick is refused by runs_scheduled_for_idx; rows without a tick are not', () => {
    const store = tempDatabase();
    const insert = store.sqlite.prepare(
      `insert into runs (status, started_at, upstream, "trigger", scheduled_for) values ('failed', ?, ?, ?, ?)`,
    );
    insert.run(T1, UPSTREAM, 'schedule', T1);
    insert.run(T1, UPSTREAM, 'admin', null);
    insert.run(T1, UPSTREAM, 'admin', null);
    expect(() => insert.run(T1, UPSTREAM, 'catch-up', T1)).toThrow(
      /UNIQUE constraint failed: runs\.scheduled_for/,
    );
  });
});

describePostgres('the key under the rule on PostgreSQL', () => {
  const pg = usePostgres();
  it('a second row of one tick is refused by runs_scheduled_for_idx; rows without a tick are not', async () => {
    const name = await pg.server.createDatabase();
    const store = await openPgStoreAt(pg.server.url(name));
    try {
      const admin = pg.server.admin(name);
      const insert = (trigger: string, at: string | null) =>
        admin.query(
          `insert into runs (status, started_at, upstream, "trigger", scheduled_for) values ('failed', $1, $2, $3, $4)`,
          [T1, UPSTREAM, trigger, at],
        );
      await insert('schedule', T1);
      await insert('admin', null);
      await insert('admin', null);
      await expect(insert('catch-up', T1)).rejects.toMatchObject({
        code: '23505',
        constraint: 'runs_scheduled_for_idx',
      });
    } finally {
      await store.close();
    }
  });
});
