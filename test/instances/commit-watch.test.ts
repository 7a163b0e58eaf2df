import { describe, expect, it, onTestFinished } from 'vitest';
import { openPgStore } from '../../src/db/postgres/store.js';
import type { Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { describePostgres, pgTarget, STORE_KINDS, storeOpener, usePostgres } from '../helpers/postgres.js';
import { eventually } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';

/** Counts the calls of a watch on `store`, stopped when the test ends. */
function watch(store: Store): { calls: () => number; errors: unknown[] } {
  let calls = 0;
  const errors: unknown[] = [];
  const stop = store.watchCommits(() => (calls += 1), { pollMs: 20, onError: (e) => errors.push(e) });
  onTestFinished(stop);
  return { calls: () => calls, errors };
}

const atLeast = (n: number, read: () => number) => eventually(() => (read() >= n ? read() : undefined));

describe.each(STORE_KINDS)('watchCommits on %s', (kind) => {
  const stores = storeOpener(kind);

  it('calls once at the start, then after a run another connection commits', async () => {
    const store = await stores.open();
    const other = await stores.another(store);
    const watched = watch(store);
    await atLeast(1, watched.calls);
    const before = watched.calls();
    const upstream = await simulatedUpstream({ seed: 50, count: 4 });
    await runSync(syncConfig(upstream.url), { store: other, logger: silentLogger() });
    await atLeast(before + 1, watched.calls);
    expect(watched.errors).toEqual([]);
  });
});

describePostgres('watchCommits on PostgreSQL after a lost connection', () => {
  const pg = usePostgres();
  const open = async (url: string): Promise<Store> => {
    const store = await openPgStore(pgTarget(url), { poolMax: 2 });
    onTestFinished(() => store.close());
    return store;
  };

  it('reports the loss, listens again by itself, calls once for what it may have missed, and hears the next commit', async () => {
    const name = await pg.server.createDatabase();
    const store = await open(pg.server.url(name));
    const watched = watch(store);
    await atLeast(1, watched.calls);
    // The listener's session: the one whose last statement was LISTEN.
    const terminated = await pg.server
      .admin(name)
      .query(`select pg_terminate_backend(pid) from pg_stat_activity where query ilike 'listen %'`);
    expect(terminated.rowCount).toBe(1);
    await atLeast(2, watched.calls);
    expect(watched.errors).toHaveLength(1);
    expect(String(watched.errors[0])).toMatch(/lost the commit listener on postgres:\/\/postgres:\*\*\*@/);
    const after = watched.calls();
    const upstream = await simulatedUpstream({ seed: 51, count: 4 });
    await runSync(syncConfig(upstream.url), {
      store: await open(pg.server.url(name)),
      logger: silentLogger(),
    });
    await atLeast(after + 1, watched.calls);
  });
});

describePostgres('watchCommits on PostgreSQL: one listening session per store', () => {
  const pg = usePostgres();

  it('two watchers of one store share one LISTEN session, each called at its start and after a commit; the session ends with the last watcher', async () => {
    const name = await pg.server.createDatabase();
    const store = await openPgStore(pgTarget(pg.server.url(name)), { poolMax: 2 });
    onTestFinished(() => store.close());
    const listeners = async () =>
      Number(
        (
          await pg.server
            .admin(name)
            .query<{ n: string }>(`select count(*) as n from pg_stat_activity where query ilike 'listen %'`)
        ).rows[0]?.n,
      );
    let first = 0;
    let second = 0;
    const stopFirst = store.watchCommits(() => (first += 1), { pollMs: 20 });
    await atLeast(1, () => first);
    const stopSecond = store.watchCommits(() => (second += 1), { pollMs: 20 });
    await atLeast(1, () => second);
    expect(await listeners()).toBe(1);
    const upstream = await simulatedUpstream({ seed: 52, count: 4 });
    const [a, b] = [first, second];
    await runSync(syncConfig(upstream.url), { store, logger: silentLogger() });
    await atLeast(a + 1, () => first);
    await atLeast(b + 1, () => second);
    stopFirst();
    expect(await listeners()).toBe(1);
    stopSecond();
    await eventually(async () => ((await listeners()) === 0 ? true : undefined));
  });
});
