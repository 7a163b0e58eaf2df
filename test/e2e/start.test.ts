import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { WAIT_MS } from '../helpers/patience.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { cliDatabases, STORE_KINDS, type CliDatabase } from '../helpers/postgres.js';

const TOKEN = 'e2e-admin-token-0123456789';

beforeAll(() => ensureBuilt());

interface RunJson {
  id: number;
  status: string;
  added: number;
  changed: number;
  removed: number;
  error: { code: string; message: string } | null;
}

async function startMain(env: Record<string, string>, db?: CliDatabase) {
  const proc = runCli(['start', '--port', '0'], {
    ...(db?.env ?? { DATABASE_PATH: join(tempDir(), 'mirror.db') }),
    LOG_LEVEL: 'info',
    SNAPSHOT_POLL: '100ms',
    ...env,
  });
  const line = await proc.waitFor(/"msg":"coworker-mirror started"/);
  const url = (JSON.parse(line) as { url: string }).url;
  const runs = async () =>
    ((await (await fetch(`${url}/api/mirror/runs/`)).json()) as { results: RunJson[] }).results;
  return { proc, url, db, runs };
}

/** What start left: a sound file on SQLite (PostgreSQL's soundness is its own), no run held, the runs. */
async function dbFacts(db: CliDatabase) {
  const [integrity] =
    'DATABASE_PATH' in db.env ? await db.rows('pragma integrity_check') : [{ integrity_check: 'ok' }];
  const [running] = await db.rows("select count(*) as n from runs where status = 'running'");
  return {
    integrity: integrity?.integrity_check,
    running: running?.n,
    statuses: (await db.rows('select status from runs order by id')).map((r) => r.status),
  };
}

describe.each(STORE_KINDS)('coworker-mirror start on %s: runs and the store', (kind) => {
  const database = cliDatabases(kind);

  it('syncs on a schedule of every second, records the upstream changes, serves them, exits 0 on SIGTERM', async () => {
    const upstream = await simulatedUpstream({ seed: 11, count: 30 });
    const db = await database();
    const main = await startMain({ UPSTREAM_URL: upstream.url, SYNC_CRON: '* * * * * *' }, db);
    await eventually(
      async () => ((await main.runs()).some((r) => r.status === 'succeeded') ? true : undefined),
      WAIT_MS,
      'first run',
    );
    upstream.data.edit(2);
    upstream.data.add(1);
    const changedRun = await eventually(
      async () =>
        (await main.runs()).find((r) => r.status === 'succeeded' && r.changed === 2 && r.added === 1),
      WAIT_MS,
      'a run with the upstream changes',
    );
    expect(changedRun.removed).toBe(0);
    const changes = (await (await fetch(`${main.url}/api/mirror/changes/?kind=changed`)).json()) as {
      results: unknown[];
    };
    expect(changes.results).toHaveLength(2);
    // The sync commits in its own process; the server swaps the snapshot in just after.
    const count = await eventually(
      async () => {
        const list = await fetch(`${main.url}${LIST_PATH}`);
        const body = (await list.json()) as { count: number };
        return list.status === 200 && body.count === upstream.data.count ? body.count : undefined;
      },
      WAIT_MS,
      'the new snapshot served',
    );
    expect(count).toBe(upstream.data.count);

    main.proc.child.kill('SIGTERM');
    expect(await main.proc.exited).toEqual({ code: 0, signal: null });
    expect(await dbFacts(db)).toMatchObject({ integrity: 'ok', running: 0 });
  });

  it('SIGTERM in the middle of a run: exit 0, the run recorded as aborted, nothing partial stored', async () => {
    const upstream = await simulatedUpstream({ seed: 12, count: 200 });
    upstream.faults.set({ latency: 150 });
    const db = await database();
    const main = await startMain(
      { UPSTREAM_URL: upstream.url, SYNC_CRON: '0 0 1 1 *', SYNC_CONCURRENCY: '1' },
      db,
    );
    await main.proc.waitFor(/"msg":"sync started"/);
    await eventually(
      () => (upstream.requests.length >= 3 ? true : undefined),
      WAIT_MS,
      'a few pages fetched',
    );
    main.proc.child.kill('SIGTERM');
    expect(await main.proc.exited).toEqual({ code: 0, signal: null });
    expect(await dbFacts(db)).toEqual({ integrity: 'ok', running: 0, statuses: ['aborted'] });
    expect(await db.rows('select count(*) as n from versions')).toEqual([{ n: 0 }]);
    expect(await db.rows('select error_code from runs')).toEqual([{ error_code: 'RUN_ABORTED' }]);
  });

  it('a tick during a run is skipped and logged; the admin route answers 401, 403, 202 and 409', async () => {
    const upstream = await simulatedUpstream({ seed: 13, count: 120 });
    upstream.faults.set({ latency: 120 });
    const main = await startMain(
      { UPSTREAM_URL: upstream.url, SYNC_CRON: '* * * * * *', SYNC_CONCURRENCY: '1', ADMIN_TOKEN: TOKEN },
      await database(),
    );
    await main.proc.waitFor(/sync skipped: a run is in progress/);
    const post = (auth?: string) =>
      fetch(`${main.url}/api/mirror/sync/`, { method: 'POST', headers: auth ? { Authorization: auth } : {} });
    const none = await post();
    expect(none.status).toBe(401);
    expect((await post('Bearer wrong-token-wrong-token')).status).toBe(403);
    const busy = await post(`Bearer ${TOKEN}`);
    expect(busy.status).toBe(409);
    // Let the scheduled run finish, then an admin run starts at once and says its id.
    upstream.faults.clear();
    await eventually(
      async () => ((await main.runs()).some((r) => r.status === 'succeeded') ? true : undefined),
      WAIT_MS,
      'a run',
    );
    const started = await eventually(
      async () => {
        const res = await post(`Bearer ${TOKEN}`);
        return res.status === 202 ? ((await res.json()) as { run: number }) : undefined;
      },
      WAIT_MS,
      'an admin run',
    );
    expect(started.run).toBeGreaterThan(1);
    main.proc.child.kill('SIGTERM');
    await main.proc.exited;
    expect(main.proc.output()).not.toContain(TOKEN);
  });
});

describe('coworker-mirror start (the built CLI as a real process)', () => {
  it('without ADMIN_TOKEN the admin route does not exist', async () => {
    const upstream = await simulatedUpstream({ seed: 14, count: 5 });
    const main = await startMain({ UPSTREAM_URL: upstream.url, SYNC_CRON: '0 0 1 1 *' });
    const res = await fetch(`${main.url}/api/mirror/sync/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(404);
  });

  it('with no UPSTREAM_URL it runs the demo: says so, and serves the list endpoint', async () => {
    const main = await startMain({ SYNC_CRON: '0 0 1 1 *', DEMO_UPSTREAM_PORT: '0' });
    await main.proc.waitFor(/DEMO MODE/);
    const body = await eventually(
      async () => {
        const res = await fetch(`${main.url}${LIST_PATH}`);
        return res.status === 200 ? ((await res.json()) as { count: number }) : undefined;
      },
      WAIT_MS,
      'the demo listing',
    );
    expect(body.count).toBeGreaterThan(0);
    expect(main.proc.output()).toMatch(/UPSTREAM_URL=https:\/\/your-site/);
  });

  it('a port in use stops it with exit 2 naming PORT, and leaves nothing running', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => blocker.close(() => r())));
    const port = String((blocker.address() as AddressInfo).port);
    const proc = runCli(['start'], {
      PORT: port,
      DATABASE_PATH: join(tempDir(), 'm.db'),
      SYNC_CRON: '0 0 1 1 *',
    });
    const { code } = await proc.exited;
    expect(code).toBe(2);
    expect(proc.output()).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\)`));
  });

  it('a bad variable stops it with exit 2, naming the variable and what it expects', async () => {
    const proc = runCli(['start'], { SYNC_CONCURRENCY: 'lots', PORT: '99999' });
    const { code } = await proc.exited;
    expect(code).toBe(2);
    expect(proc.output()).toMatch(/SYNC_CONCURRENCY: expected a whole number/);
    expect(proc.output()).toMatch(/PORT: expected at most 65535/);
  });
});
