import { beforeAll, expect, it, onTestFinished } from 'vitest';
import { describePostgres, startPostgres, usePostgres } from '../helpers/postgres.js';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import {
  countOf,
  killInstance,
  pgCtl,
  restartPostgres,
  runsOf,
  startInstance,
  untilServes,
  type Instance,
  type RunFacts,
} from './instances.js';

beforeAll(() => ensureBuilt(), 120_000);

const REFUSED = /"msg":"sync refused: another process holds the lock"/;

/** No two runs were ever running at once: their [start, finish] spans do not overlap. */
function overlapping(runs: RunFacts[]): [number, number][] {
  const found: [number, number][] = [];
  for (const a of runs) {
    for (const b of runs) {
      if (a.id >= b.id) continue;
      const aEnd = a.finished_at ?? '9999';
      const bEnd = b.finished_at ?? '9999';
      if (a.started_at < bEnd && b.started_at < aEnd) found.push([a.id, b.id]);
    }
  }
  return found;
}

describePostgres('one sync at a time across instances', () => {
  const pg = usePostgres();

  it('a refused tick names the holder; SIGKILL of the holder mid-sync: the next tick elsewhere takes the lock and marks its run aborted', async () => {
    const name = await pg.server.createDatabase();
    const database = pg.server.url(name);
    const upstream = await simulatedUpstream({ seed: 30, count: 12, pageSize: 5 });
    // The first run to take the lock stalls on page 2, holding it for as long as the test needs.
    upstream.faults.set({ hang: { page: 2 } });
    const env = { SYNC_CRON: '* * * * * *' };
    const instances = await Promise.all([
      startInstance(database, upstream.url, env),
      startInstance(database, upstream.url, env),
    ]);
    const [refusedLine, survivor] = await Promise.race(
      instances.map(async (i) => [await i.proc.waitFor(REFUSED), i] as const),
    );
    const holder = instances.find((i) => i !== survivor) as Instance;
    const held = (await runsOf(pg.server.admin(name))).find((r) => r.status === 'running');
    expect(JSON.parse(refusedLine)).toMatchObject({
      holderRunId: held?.id,
      holderPid: expect.any(Number) as number,
      holderHost: expect.any(String) as string,
      holderInstance: expect.stringMatching(/\//) as string,
    });

    upstream.faults.clear('hang');
    killInstance(holder);
    const runs = await eventually(async () => {
      const all = await runsOf(pg.server.admin(name));
      return all.some((r) => r.status === 'succeeded') ? all : undefined;
    });
    expect(runs[0]).toMatchObject({ id: held?.id, status: 'aborted', error_code: 'RUN_ABORTED' });
    expect(runs.filter((r) => r.status === 'running')).toEqual([]);
    expect(overlapping(runs)).toEqual([]);
    await untilServes(survivor, 12);
  });
});

describePostgres('PostgreSQL going away and coming back', () => {
  it('every instance keeps serving its snapshot, /readyz says why, a sync fails with DB_ERROR, and syncs resume', async () => {
    const server = await startPostgres();
    onTestFinished(async () => {
      await server.stop();
    });
    const database = server.url(await server.createDatabase());
    const upstream = await simulatedUpstream({ seed: 31, count: 12 });
    expect((await runCli(['sync', '--upstream', upstream.url], { DATABASE_URL: database }).exited).code).toBe(
      0,
    );
    const [a, b] = await Promise.all([
      startInstance(database, upstream.url),
      startInstance(database, upstream.url),
    ]);
    const before = await Promise.all([untilServes(a, 12), untilServes(b, 12)]);

    pgCtl(server, ['stop', '-m', 'fast']);
    let back = false;
    onTestFinished(() => {
      if (back) pgCtl(server, ['stop', '-m', 'fast']);
    });
    for (const [i, instance] of [a, b].entries()) {
      expect(await instance.list()).toEqual({ status: 200, body: before[i] });
      const ready = await fetch(`${instance.url}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([
        503,
        {
          status: 'unready',
          reason: expect.stringMatching(
            /^cannot connect to PostgreSQL at postgres:\/\/postgres:\*\*\*@.*check that PostgreSQL runs/,
          ) as string,
        },
      ]);
    }
    upstream.data.add(2);
    expect(await a.trigger()).toEqual({
      status: 503,
      body: {
        code: 'DB_ERROR',
        detail: expect.stringMatching(
          /^The sync could not start: cannot connect to PostgreSQL at postgres:\/\/postgres:\*\*\*@/,
        ) as string,
      },
    });
    expect(await a.list()).toEqual({ status: 200, body: before[0] });

    restartPostgres(server);
    back = true;
    await eventually(async () => ((await fetch(`${a.url}/readyz`)).status === 200 ? true : undefined));
    expect(await a.trigger()).toMatchObject({ status: 202 });
    // B hears of A's commit on its listener, which reconnected by itself.
    await Promise.all([untilServes(a, 14), untilServes(b, 14)]);
    for (const instance of [a, b]) expect(instance.proc.child.exitCode).toBeNull();
    expect(countOf((await b.list()).body)).toBe(14);
  });
});
