import { expect, it, onTestFinished } from 'vitest';
import { openPgStore } from '../../../src/db/postgres/store.js';
import { silentLogger } from '../../../src/logger.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { syncConfig } from '../../helpers/config.js';
import { describePostgres, pgTarget, usePostgres } from '../../helpers/postgres.js';
import { simulatedUpstream } from '../../helpers/sync.js';

describePostgres("a run's stage on PostgreSQL", () => {
  const pg = usePostgres();

  it('holds a connection of its own: a pool of one (DATABASE_POOL_MAX=1) still syncs, first and edited', async () => {
    const name = await pg.server.createDatabase();
    const store = await openPgStore(pgTarget(pg.server.url(name)), { poolMax: 1 });
    onTestFinished(() => store.close());
    const upstream = await simulatedUpstream({ seed: 61, count: 20 });
    const deps = { store, logger: silentLogger() };
    const first = await runSync(syncConfig(upstream.url), deps);
    expect(first.counts.added).toBe(20);
    upstream.data.edit(3, 'post'); // three coworkers' posts
    const second = await runSync(syncConfig(upstream.url), deps);
    expect(second.counts).toMatchObject({ added: 0, changed: 3, removed: 0, unchanged: 17 });
    expect((await store.listRuns({ limit: 5 })).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('a lost connection mid-stage fails its next call as DB_ERROR saying what to check, never the password', async () => {
    const name = await pg.server.createDatabase();
    const store = await openPgStore(pgTarget(pg.server.url(name)), { poolMax: 2 });
    onTestFinished(() => store.close());
    const run = await store.beginRun('http://upstream.invalid');
    const stage = await store.openStage(run.id);
    const entry = { position: 0, page: 1, index: 0, uuid: 'u1', body: '{"uuid":"u1"}', hash: 'h1' };
    await stage.append([entry]);
    await pg.server
      .admin(name)
      .query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [name],
      );
    const failed: unknown = await stage
      .append([{ ...entry, position: 1, index: 1 }])
      .catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'DB_ERROR' });
    expect(String((failed as Error).message)).not.toMatch(/:[^*@/]+@/);
    // Its tables went with the session: the drop fails, as the sync expects (and logs).
    await stage.close().catch(() => undefined);
  });
});
