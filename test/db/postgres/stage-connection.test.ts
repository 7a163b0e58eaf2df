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
});
