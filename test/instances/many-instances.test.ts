import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, expect, it } from 'vitest';
import { knownMigrations } from '../../src/db/migration-files.js';
import { describePostgres, usePostgres } from '../helpers/postgres.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { runsOf, startInstance, untilServes } from './instances.js';

beforeAll(() => ensureBuilt(), 120_000);

describePostgres('many `start` instances on one PostgreSQL', () => {
  const pg = usePostgres();

  it("every instance serves another instance's commit, told by NOTIFY (no poll: SNAPSHOT_POLL=1h)", async () => {
    const database = pg.server.url(await pg.server.createDatabase());
    const upstream = await simulatedUpstream({ seed: 20, count: 12 });
    expect((await runCli(['sync', '--upstream', upstream.url], { DATABASE_URL: database }).exited).code).toBe(
      0,
    );
    const env = { SNAPSHOT_POLL: '1h' };
    const [a, b] = await Promise.all([
      startInstance(database, upstream.url, env),
      startInstance(database, upstream.url, env),
    ]);
    await untilServes(b, 12);

    upstream.data.add(3);
    expect(await a.trigger()).toMatchObject({ status: 202 });
    const served = await untilServes(b, 15);
    // A and B serve the same run (their links differ only by their own address).
    const results = (body: string) => (JSON.parse(body) as { results: unknown }).results;
    expect(results((await a.list()).body)).toEqual(results(served));
    const runs = await runsOf(pg.server.admin(new URL(database).pathname.slice(1)));
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(b.proc.output()).toMatch(/"runId":2,"entries":15.*"msg":"snapshot swapped in"/);
  });

  it('instances starting together on a new database migrate it once, and all come up', async () => {
    const name = await pg.server.createDatabase();
    const database = pg.server.url(name);
    const upstream = await simulatedUpstream({ seed: 21, count: 5 });
    const instances = await Promise.all([1, 2, 3].map(() => startInstance(database, upstream.url)));
    const { rows } = await pg.server
      .admin(name)
      .query<{ hash: string }>('select hash from drizzle.__drizzle_migrations order by id');
    // Each migration recorded once: a second apply would have failed or added a row.
    expect(rows.map((r) => r.hash)).toEqual(knownMigrations('postgres').map((m) => m.hash));
    for (const instance of instances) await untilServes(instance, 5);
  });
});

it('instances starting together on a new SQLite file migrate it once, and all come up', async () => {
  const file = join(tempDir(), 'mirror.db');
  const upstream = await simulatedUpstream({ seed: 22, count: 5 });
  const instances = await Promise.all([1, 2, 3].map(() => startInstance(file, upstream.url)));
  const db = new Database(file, { readonly: true });
  try {
    const hashes = db.prepare('select hash from __drizzle_migrations order by id').pluck().all();
    expect(hashes).toEqual(knownMigrations('sqlite').map((m) => m.hash));
  } finally {
    db.close();
  }
  // Each comes up and serves the one startup run that took the lock.
  for (const instance of instances) await untilServes(instance, 5);
});
