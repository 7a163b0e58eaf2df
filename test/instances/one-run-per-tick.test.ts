import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { previousCronRun } from '../../src/sync/next-cron-run.js';
import { describePostgres, usePostgres } from '../helpers/postgres.js';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { ADMIN_TOKEN, NEVER, startInstance, untilServes, type Instance } from './instances.js';

// N `start` instances on one database cost the upstream what one costs: each tick of SYNC_CRON is
// one run across them, whatever their random delays, and ticks missed while none ran are one run.

beforeAll(() => ensureBuilt(), 120_000);

interface TickRun {
  id: number;
  status: string;
  trigger: string | null;
  scheduled_for: string | null;
  error_code: string | null;
}

const TICK_RUNS_SQL = 'select id, status, "trigger", scheduled_for, error_code from runs order by id';

/** The runs as both stores read them, by SQL of their own. */
interface TestDatabase {
  url: string;
  runs(): Promise<TickRun[]>;
  /** Moves every run back by `ms` (as if they ran that long ago). */
  age(ms: number): Promise<void>;
}

function sqliteDatabase(): TestDatabase {
  const file = join(tempDir(), 'mirror.db');
  const read = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(file);
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  return {
    url: file,
    runs: () => Promise.resolve(read((db) => db.prepare(TICK_RUNS_SQL).all() as TickRun[])),
    age: (ms) =>
      Promise.resolve(
        read((db) => {
          const back = (at: string | null) =>
            at === null ? null : new Date(Date.parse(at) - ms).toISOString();
          const rows = db.prepare('select id, started_at, finished_at, heartbeat_at from runs').all() as {
            id: number;
            started_at: string;
            finished_at: string | null;
            heartbeat_at: string | null;
          }[];
          const update = db.prepare(
            'update runs set started_at = ?, finished_at = ?, heartbeat_at = ? where id = ?',
          );
          for (const r of rows)
            update.run(back(r.started_at), back(r.finished_at), back(r.heartbeat_at), r.id);
        }),
      ),
  };
}

function postgresDatabase(pg: ReturnType<typeof usePostgres>, name: string): TestDatabase {
  const admin = pg.server.admin(name);
  const shift = (column: string, ms: number) =>
    `${column} = to_char((${column}::timestamptz - interval '${ms} milliseconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  return {
    url: pg.server.url(name),
    runs: async () =>
      (await admin.query<TickRun>(TICK_RUNS_SQL.replace('select id', 'select id::int as id'))).rows,
    age: async (ms) => {
      await admin.query(
        `update runs set ${shift('started_at', ms)}, ${shift('finished_at', ms)}, ${shift('heartbeat_at', ms)}`,
      );
    },
  };
}

/** SIGTERM, as an orchestrator stops a replica; resolves once it exited. */
async function stop(instance: Instance): Promise<void> {
  instance.proc.child.kill('SIGTERM');
  await instance.proc.exited;
}

const EVERY_2S = '*/2 * * * * *';

describePostgres('three `start` instances on one PostgreSQL, a tick every 2 s and a random delay', () => {
  const pg = usePostgres();

  it('regression: each tick is one run, one crawl of the upstream, across all three; the others say who served it, and no sync fails SYNC_LOCKED', async () => {
    const database = postgresDatabase(pg, await pg.server.createDatabase());
    const upstream = await simulatedUpstream({ seed: 40, count: 8 });
    const env = { SYNC_CRON: EVERY_2S, SYNC_RANDOM_DELAY: '1500ms' };
    const from = Date.now();
    const instances = await Promise.all([1, 2, 3].map(() => startInstance(database.url, upstream.url, env)));
    // Several ticks, each run by some instance after its own random delay.
    await eventually(
      async () => {
        const ticks = (await database.runs()).filter(
          (r) => r.trigger === 'schedule' && r.status !== 'running',
        );
        return ticks.length >= 5 ? ticks : undefined;
      },
      undefined,
      'five scheduled runs',
    );
    await Promise.all(instances.map(stop));
    const until = Date.now();

    const runs = await database.runs();
    // Every run served a tick of its own: what started it, and when that tick was.
    const ticks = runs.map((r) => r.scheduled_for);
    expect(ticks.every((t) => t !== null)).toBe(true);
    expect(new Set(ticks).size).toBe(runs.length);
    const tickTriggers = ['schedule', 'startup', 'catch-up'];
    expect(runs.filter((r) => !tickTriggers.includes(r.trigger ?? ''))).toEqual([]);
    // No more runs than ticks came while the instances ran (a start-up serves the tick before it).
    const firstTick = Math.floor(from / 2000) * 2000 - 2000;
    const tickCount = Math.floor(until / 2000) - firstTick / 2000 + 1;
    expect(runs.length).toBeLessThanOrEqual(tickCount);
    for (const t of ticks) expect(Date.parse(t ?? '')).toBeGreaterThanOrEqual(firstTick);
    // Each names the tick it served (a nominal time of the schedule), not the moment its delay ended.
    expect(ticks.filter((t) => Date.parse(t ?? '') % 2000 !== 0)).toEqual([]);
    // The upstream's cost: one crawl per run, never one per instance (page 1 is the bare list URL).
    const crawls = upstream.requests.filter((r) => r.method === 'GET' && r.url === LIST_PATH);
    expect(crawls.length).toBeGreaterThanOrEqual(runs.filter((r) => r.status === 'succeeded').length);
    expect(crawls.length).toBeLessThanOrEqual(runs.length);
    expect(runs.filter((r) => r.error_code === 'SYNC_LOCKED')).toEqual([]);
    const output = instances.map((i) => i.proc.output()).join('\n');
    expect(output).not.toMatch(/sync failed[^\n]*SYNC_LOCKED/);
    // The instances that came second said so, naming the run and the instance that served the tick.
    const served = output
      .split('\n')
      .filter((l) => l.includes('"msg":"tick already served"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(served.length).toBeGreaterThan(0);
    for (const line of served) {
      expect(line).toMatchObject({
        level: 30,
        trigger: expect.stringMatching(/^(schedule|startup|catch-up)$/) as string,
        tick: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/) as string,
        servedByRun: expect.any(Number) as number,
        servedBy: expect.stringMatching(/^.+\/\d+$/) as string,
      });
      expect(runs.find((r) => r.id === line.servedByRun)?.scheduled_for).toBe(line.tick);
    }
  });
});

/** The databases the catch-up and trigger tests run on. */
function eachDatabase(body: (make: () => Promise<TestDatabase>) => void): void {
  describe('on SQLite', () => body(() => Promise.resolve(sqliteDatabase())));
  describePostgres('on PostgreSQL', () => {
    const pg = usePostgres();
    body(async () => postgresDatabase(pg, await pg.server.createDatabase()));
  });
}

eachDatabase((make) => {
  it('regression: ticks missed while every instance was down are one catch-up run, of the last tick, when three instances start together', async () => {
    const database = await make();
    const upstream = await simulatedUpstream({ seed: 41, count: 6 });
    const sync = runCli(['sync', '--upstream', upstream.url, '--db', database.url], {});
    expect((await sync.exited).code).toBe(0);
    // The last run was over a year ago: this year's tick of the yearly schedule was missed.
    await database.age(400 * 86_400_000);
    upstream.data.add(2);
    const instances = await Promise.all([1, 2, 3].map(() => startInstance(database.url, upstream.url)));
    for (const instance of instances) await untilServes(instance, 8);
    const missed = previousCronRun(NEVER, new Date())?.toISOString();
    const runs = await eventually(async () => {
      const all = await database.runs();
      return all.every((r) => r.status !== 'running') ? all : undefined;
    });
    expect(runs).toEqual([
      { id: 1, status: 'succeeded', trigger: 'command', scheduled_for: null, error_code: null },
      { id: 2, status: 'succeeded', trigger: 'catch-up', scheduled_for: missed, error_code: null },
    ]);
    await Promise.all(instances.map(stop));
    const output = instances.map((i) => i.proc.output()).join('\n');
    expect(output).toMatch(
      /"missedTick":"[^"]+","lastRunAt":"[^"]+".*"msg":"a scheduled sync was missed while no instance ran: catching up once"/,
    );
    expect(output).not.toMatch(/sync failed/);
  });

  it('the admin route and a bare `sync` still start a run at once; `runs`, the API and the runs page say what started each', async () => {
    const database = await make();
    const upstream = await simulatedUpstream({ seed: 42, count: 4 });
    const instance = await startInstance(database.url, upstream.url);
    await untilServes(instance, 4);
    upstream.data.add(1);
    // Asked again while the start-up run's process is still ending (409: a run is in progress).
    await eventually(async () => ((await instance.trigger()).status === 202 ? true : undefined));
    await untilServes(instance, 5);
    const sync = runCli(['sync', '--upstream', upstream.url, '--db', database.url], {});
    expect((await sync.exited).code).toBe(0);
    const runs = await database.runs();
    expect(runs.map((r) => [r.id, r.status, r.trigger])).toEqual([
      [1, 'succeeded', 'startup'],
      [2, 'succeeded', 'admin'],
      [3, 'succeeded', 'command'],
    ]);
    // The first start on an empty database served the schedule's last tick; the others no tick.
    const firstTick = previousCronRun(NEVER, new Date())?.toISOString();
    expect(runs.map((r) => r.scheduled_for)).toEqual([firstTick, null, null]);

    const cli = runCli(['runs', '--json', '--db', database.url], {});
    expect((await cli.exited).code).toBe(0);
    const lines = cli
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.id, l.trigger, l.scheduled_for])).toEqual([
      [3, 'command', null],
      [2, 'admin', null],
      [1, 'startup', firstTick],
    ]);
    const api = (await (await fetch(`${instance.url}/api/mirror/runs/`)).json()) as {
      results: Record<string, unknown>[];
    };
    expect(api.results.map((r) => [r.id, r.trigger, r.scheduled_for])).toEqual([
      [3, 'command', null],
      [2, 'admin', null],
      [1, 'startup', firstTick],
    ]);
    const page = await (
      await fetch(`${instance.url}/runs/`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    expect(page).toContain('<th scope="col">Started by</th>');
    expect(page).toContain('<td>admin (POST /api/mirror/sync/)</td>');
    expect(page).toContain('<td>command (coworker-mirror sync)</td>');
    expect(page).toMatch(new RegExp(`<td>start-up for <time datetime="${firstTick ?? ''}">`));
    await stop(instance);
  });
});
