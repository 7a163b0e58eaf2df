import { beforeAll, describe, expect, it } from 'vitest';
import { describePostgres, usePostgres } from '../helpers/postgres.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';

beforeAll(() => ensureBuilt());

describe('choosing the store from the CLI', () => {
  it('DATABASE_URL and DATABASE_PATH both set: exit 2 naming both, the password never shown', async () => {
    const runs = runCli(['runs'], {
      DATABASE_URL: 'postgres://mirror:s3cret@127.0.0.1:1/mirror',
      DATABASE_PATH: './data/mirror.db',
    });
    expect((await runs.exited).code).toBe(2);
    expect(runs.output()).toContain('DATABASE_URL: DATABASE_URL and DATABASE_PATH are both set');
    expect(runs.output()).toContain('DATABASE_PATH: DATABASE_URL and DATABASE_PATH are both set');
    expect(runs.output()).not.toContain('s3cret');
  });
});

describePostgres('the CLI on PostgreSQL', () => {
  const pg = usePostgres();

  it('a wrong password: exit 8 with one line saying what to check, the password never shown', async () => {
    const url = pg.server.url(pg.database, { password: 'wrong-s3cret' });
    for (const args of [
      ['runs', '--db', url],
      ['changes', '--db', url],
    ]) {
      const run = runCli(args, {});
      expect((await run.exited).code).toBe(8);
      expect(run.output()).toMatch(
        /refused the password of user .*check the user and password of DATABASE_URL/,
      );
      expect(run.output().trim().split('\n')).toHaveLength(1);
      expect(run.output()).not.toContain('wrong-s3cret');
    }
  });

  it('sync then runs through DATABASE_URL: one succeeded run, listed as on SQLite', async () => {
    const upstream = await simulatedUpstream({ seed: 5, count: 12 });
    const env = { DATABASE_URL: pg.url };
    const sync = runCli(['sync', '--upstream', upstream.url], env);
    expect((await sync.exited).code).toBe(0);
    const runs = runCli(['runs', '--json'], env);
    expect((await runs.exited).code).toBe(0);
    const rows = runs
      .output()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { status: string; entries: number });
    expect(rows).toMatchObject([{ status: 'succeeded', entries: 12 }]);
    expect(runs.output()).not.toContain(pg.server.password);
  });
});
