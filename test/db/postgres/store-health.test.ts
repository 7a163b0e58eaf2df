import { expect, it } from 'vitest';
import { openPgStore } from '../../../src/db/postgres/store.js';
import { describePostgres, pgTarget, usePostgres } from '../../helpers/postgres.js';

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
