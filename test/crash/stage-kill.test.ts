import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { applicationName } from '../../src/db/postgres/open.js';
import { openPgStore } from '../../src/db/postgres/store.js';
import type { Store } from '../../src/db/store.js';
import { Rng } from '../../src/simulated-upstream/index.js';
import { deriveSeed } from '../../src/simulated-upstream/prng.js';
import { STORE_KINDS, pgTarget, storeRows, usePostgres } from '../helpers/postgres.js';
import { eventually } from '../helpers/process.js';
import { untilTestEnds } from '../helpers/scope.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { ChildRun } from './sync-child.js';

const CHILD = fileURLToPath(new URL('./stage-kill-child.ts', import.meta.url));
const SEED = 21;

/** The listing served now, as uuids in order, and the run it is the listing of. */
async function served(store: Store): Promise<{ runId: number | null; uuids: string[] }> {
  const run = await store.latestSucceededRun();
  if (!run) return { runId: null, uuids: [] };
  const listing = await store.listingAt(run);
  return { runId: run.id, uuids: listing.entries.map((e) => (JSON.parse(e) as { uuid: string }).uuid) };
}

/** Kill points, in the order the run meets them, each at a seeded instant of its phase. */
const POINTS = ['append', 'record', 'commit', 'done', 'append', 'record', 'commit', 'done'] as const;

describe.each(STORE_KINDS)('a streaming sync SIGKILLed at seeded instants, on %s', (kind) => {
  const pg = kind === 'postgres' ? usePostgres() : null;

  it('leaves the old or the new state whole every time, no stage behind, and the next run succeeds', async () => {
    const target = pg ? pg.server.url(await pg.server.createDatabase()) : join(tempDir(), 'mirror.db');
    const store: Store & { close: () => unknown } = pg
      ? await openPgStore(pgTarget(target), { poolMax: 4 })
      : openDatabase(target);
    untilTestEnds(() => store.close());
    // 2,500 entries: three staging batches of 1,000 and two diff chunks of 2,000 rows a side.
    const upstream = await simulatedUpstream({ seed: SEED, count: 2500 });
    await sync(store, upstream);
    const rng = new Rng(deriveSeed(SEED, `stage-kill/${kind}`));
    const landed: string[] = [];
    for (const point of POINTS) {
      const before = await served(store);
      upstream.data.edit(1 + rng.int(40));
      upstream.data.add(1 + rng.int(30));
      upstream.data.remove(1 + rng.int(20));
      const expected = upstream.data.entries().map((e) => (e as { uuid: string }).uuid);
      const n = point === 'append' ? 1 + rng.int(3) : point === 'record' ? 1 + rng.int(2) : 1;
      const child = new ChildRun(CHILD, [target, upstream.url, point, String(n)]);
      const line = await child.waitFor((l) => l.marker !== undefined);
      expect(line, child.stderr).toMatchObject({ marker: 'kill', point });
      expect((await child.exited).signal).toBe('SIGKILL');
      landed.push(`${point}#${n}`);
      if (pg) await sessionsGone(pg.server.admin(pg.database), child.pid);
      const after = await served(store);
      if (point === 'done') expect(after.uuids).toStrictEqual(expected);
      else expect(after).toStrictEqual(before);
      expect(await stageTables(store, pg ? pg.server.admin(pg.database) : null)).toBe(0);
      // The dead run reads aborted; the next one succeeds and serves the upstream's listing.
      const summary = await sync(store, upstream);
      expect((await served(store)).uuids).toStrictEqual(expected);
      expect((await store.getRun(summary.runId - 1))?.status).toMatch(/^(succeeded|aborted)$/);
    }
    expect(landed).toHaveLength(POINTS.length);
  }, 180_000);
});

type Admin = { query: (sql: string, params: unknown[]) => Promise<{ rows: { n: string }[] }> };

/** Stage tables left in the database itself (temp tables never are: they die with the connection). */
async function stageTables(store: Store, admin: Admin | null): Promise<number> {
  if (admin) {
    const { rows } = await admin.query(
      `select count(*) as n from pg_tables where tablename like 'stage%' and schemaname not like 'pg_temp%'`,
      [],
    );
    return Number(rows[0]?.n ?? 0);
  }
  const [row] = await storeRows(store, `select count(*) as n from sqlite_master where name like 'stage%'`);
  return Number(row?.n ?? 0);
}

/** The server ends a dead client's sessions when it reads the closed socket: wait for that. */
async function sessionsGone(admin: Admin, pid: number): Promise<void> {
  await eventually(
    async () => {
      const { rows } = await admin.query(
        'select count(*) as n from pg_stat_activity where application_name = $1',
        [applicationName(`stage-kill/${pid}`)],
      );
      return Number(rows[0]?.n ?? 0) === 0 ? true : undefined;
    },
    10_000,
    'the killed child to have no session left',
  );
}
