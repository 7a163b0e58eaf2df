import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { applicationName } from '../../../src/db/postgres/open.js';
import { openPgStore, type PgStore } from '../../../src/db/postgres/store.js';
import { startSimulatedUpstream } from '../../../src/simulated-upstream/index.js';
import { bodyHash } from '../../../src/sync/body-hash.js';
import { ChildRun } from '../../crash/sync-child.js';
import { describePostgres, pgTarget, usePostgres } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/process.js';
import { untilTestEnds } from '../../helpers/scope.js';

const CHILD = fileURLToPath(new URL('./pg-sync-child.ts', import.meta.url));

/** The listing served now, as uuids in order, and the run it is the listing of. */
async function served(store: PgStore): Promise<{ runId: number | null; uuids: string[] }> {
  const run = await store.latestSucceededRun();
  if (!run) return { runId: null, uuids: [] };
  const listing = await store.listingAt(run);
  return { runId: run.id, uuids: listing.entries.map((e) => (JSON.parse(e) as { uuid: string }).uuid) };
}

/** The uuids of the current listing in order, as the stage of run `runId` holds them for its diff. */
async function heldByNextRun(store: PgStore, runId: number): Promise<string[]> {
  const stage = await store.openStage(runId);
  try {
    await stage.holdCurrent(bodyHash);
    // One chunk past every row: the whole current listing.
    const { held, last } = await stage.chunk('', 1_000_000);
    expect(last).toBeNull();
    return held.sort((a, b) => a.position - b.position).map((h) => h.uuid);
  } finally {
    await stage.close();
  }
}

describePostgres('PostgreSQL: a SIGKILL at any instant of a commit', () => {
  const pg = usePostgres();
  const sessionsOf = async (pid: number): Promise<number> => {
    const { rows } = await pg.server
      .admin(pg.database)
      .query<{ n: string }>('select count(*) as n from pg_stat_activity where application_name = $1', [
        applicationName(`crash-child/${pid}`),
      ]);
    return Number(rows[0]?.n ?? 0);
  };

  it('leaves the old or the new state whole, and the next instance marks the dead run aborted', async () => {
    const upstream = await startSimulatedUpstream({ seed: 5, count: 600, pageSize: 200 });
    untilTestEnds(() => upstream.close());
    const store = await openPgStore(pgTarget(pg.url), { instanceId: 'observer' });
    untilTestEnds(() => store.close());
    const outcomes = new Set<string>();
    // Kills aimed ever later after the commit starts: inside it, at its end, after it. Whichever
    // instant each lands on, the state is one run's whole listing.
    // 'done': after the commit returned. After the first whole run, commits are a few changes.
    for (const delayMs of [0, 'done', 0, 5, 30, 'done'] as const) {
      const before = await served(store);
      upstream.data.edit(40);
      upstream.data.add(30);
      upstream.data.remove(20);
      const expected = upstream.data.entries().map((e) => (e as { uuid: string }).uuid);
      const child = new ChildRun(CHILD, [pg.url, upstream.url]);
      const line = await child.waitFor((l) => l.marker === 'commit' || l.marker === 'error');
      expect(line?.marker).toBe('commit');
      if (delayMs === 'done') await child.waitFor((l) => l.marker === 'done');
      else if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      child.kill();
      await child.exited;
      // The server ends a dead client's sessions (and its transaction with them) when it reads
      // the closed socket: wait for that, not for a time.
      await eventually(
        async () => ((await sessionsOf(child.pid)) === 0 ? true : undefined),
        10_000,
        'the killed child to have no session left',
      );
      const after = await served(store);
      if (after.runId === before.runId) {
        expect(after).toStrictEqual(before);
        outcomes.add(`old@${delayMs}`);
      } else {
        expect(after.uuids).toStrictEqual(expected);
        outcomes.add(`new@${delayMs}`);
      }
      // The child's run, if it never finished, reads aborted (its lock died with its session)...
      const [last] = await store.listRuns({ limit: 1 });
      expect(last?.status).toMatch(/^(succeeded|aborted)$/);
      // ...and is recorded so by the next instance that looks, or the next sync to take the lock.
      if (last?.status === 'aborted') expect(await store.recoverDeadRuns()).toBe(1);
      expect(await store.recoverDeadRuns()).toBe(0);
      const next = await store.beginRun('http://next.example/');
      const dead = await store.getRun(next.id - 1);
      expect(dead?.status).toMatch(/^(succeeded|aborted)$/);
      if (dead?.status === 'aborted') expect(dead.errorCode).toBe('RUN_ABORTED');
      // The stored listing is consistent with itself: what the next diff starts from, as its stage holds it.
      expect(await heldByNextRun(store, next.id)).toStrictEqual(after.uuids);
      await store.endRun({ runId: next.id, status: 'aborted', error: { code: 'TEST', message: 'probe' } });
      await store.releaseRun(next.id);
    }
    expect(outcomes).toContain('old@0');
    expect(outcomes).toContain('new@done');
  }, 120_000);
});
