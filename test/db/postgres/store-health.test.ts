import { expect, it } from 'vitest';
import { openPgStore } from '../../../src/db/postgres/store.js';
import { bodyHash } from '../../../src/sync/body-hash.js';
import { diffStaged } from '../../../src/sync/stream-diff.js';
import { describePostgres, pgTarget, usePostgres } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/process.js';
import { untilTestEnds } from '../../helpers/scope.js';
import { stagedEntries } from '../../helpers/store-runs.js';

describePostgres('the PostgreSQL store’s health', () => {
  const pg = usePostgres();

  it('is null while the database answers, then one line without the password once it is gone', async () => {
    const name = await pg.server.createDatabase('health');
    const store = await openPgStore(pgTarget(pg.server.url(name)), { poolMax: 2 });
    try {
      expect(store.file).toBe(`postgres://${pg.server.superuser}:***@127.0.0.1:${pg.server.port}/${name}`);
      expect(await store.databaseProblem()).toBeNull();
      await pg.server.admin().query(`drop database ${name} with (force)`);
      const problem = await store.databaseProblem();
      expect(problem).toMatch(new RegExp(`^cannot connect to PostgreSQL at postgres://postgres:\\*\\*\\*@`));
      expect(problem).not.toContain(pg.server.password);
      expect(problem?.split('\n')).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});

describePostgres('a PostgreSQL run whose lock connection is lost', () => {
  const pg = usePostgres();

  it('commits nothing: RUN_ABORTED, and another instance may take the lock at once', async () => {
    const store = await openPgStore(pgTarget(pg.url), { instanceId: 'loser' });
    const other = await openPgStore(pgTarget(pg.url), { instanceId: 'taker' });
    try {
      const run = await store.beginRun('http://up.example/');
      // Staged as a sync stages its crawl, on the stage's own session, before the lock is lost.
      const stage = await store.openStage(run.id);
      untilTestEnds(() => stage.close());
      await stage.append(stagedEntries(['{"uuid":"u1","name":"Ann"}'], 8));
      await stage.holdCurrent(bodyHash);
      const counts = await diffStaged(stage, store);
      // The lock's own session, ended by the server (a failover, an operator, a network cut).
      await pg.server
        .admin(pg.database)
        .query(
          "select pg_terminate_backend(l.pid) from pg_locks l where l.locktype = 'advisory' and l.objid = 2",
        );
      const taken = await eventually(() => other.beginRun('http://up.example/').catch(() => undefined));
      expect(taken.id).toBe(run.id + 1);
      await expect(store.getRun(run.id)).resolves.toMatchObject({
        status: 'aborted',
        errorCode: 'RUN_ABORTED',
      });
      const refused = await stage
        .commit({
          runId: run.id,
          finishedAt: new Date().toISOString(),
          counts,
          pages: 1,
          pageSize: 8,
          optionsBody: null,
          unknownFields: [],
          media: null,
          outbox: null,
        })
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'RUN_ABORTED' });
      expect(await other.latestSucceededRun()).toBeUndefined();
      await other.releaseRun(taken.id);
      await store.releaseRun(run.id);
    } finally {
      await store.close();
      await other.close();
    }
  });
});
