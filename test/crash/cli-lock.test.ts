import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { STORE_KINDS, usePostgres } from '../helpers/postgres.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { postgresCrashDatabase, sqliteCrashDatabase, type CrashDatabase } from './crash-store.js';
import { eventually, processGone, processOf } from '../helpers/process.js';
import { spawnCliSync } from './sync-child.js';
import { expectSoundDatabase, runsAfter } from './verify.js';

async function runRows(database: CrashDatabase): Promise<
  {
    id: number;
    status: string;
    holderPid: number | null;
    errorCode: string | null;
    errorMessage: string | null;
  }[]
> {
  const store = await database.open();
  try {
    await expectSoundDatabase(store);
    return (await runsAfter(store, 0)).map(({ id, status, holderPid, errorCode, errorMessage }) => ({
      id,
      status,
      holderPid,
      errorCode,
      errorMessage,
    }));
  } finally {
    await store.close();
  }
}

describe.each(STORE_KINDS)('sync CLI on %s: the run lock across processes', (kind) => {
  const pg = kind === 'postgres' ? usePostgres() : null;

  it('refuses a second sync with exit 4 naming the run that holds the lock; a kill of the holder frees it as aborted', async () => {
    const database = pg === null ? sqliteCrashDatabase() : await postgresCrashDatabase(pg.server);
    const dbFile = database.arg;
    const upstream = await simulatedUpstream({ seed: 3, count: 40 });
    // Every answer is held back far longer than this test lasts: the first sync sits in its crawl.
    upstream.faults.set({ latency: 120_000 });

    const holder = spawnCliSync(upstream.url, dbFile);
    const started = await holder.waitFor((line) => line.msg === 'sync started');
    expect(started, `the first sync never started:\n${holder.stdout}\n${holder.stderr}`).toBeDefined();
    // The run is held by the command's sync process (src/sync/isolated-sync.ts), its child.
    const syncPid = (await runRows(database))[0]?.holderPid ?? 0;
    expect(processOf(syncPid).parent).toBe(holder.pid);
    expect(await runRows(database)).toEqual([
      { id: 1, status: 'running', holderPid: syncPid, errorCode: null, errorMessage: null },
    ]);

    const second = spawnCliSync(upstream.url, dbFile);
    expect(await second.exited).toEqual({ code: EXIT.locked, signal: null });
    expect(second.stderr).toContain('[SYNC_LOCKED]');
    expect(second.stderr).toContain(`another sync holds the lock: run 1 (pid ${syncPid} on `);
    // The refused sync left no run behind.
    expect((await runRows(database)).map((r) => [r.id, r.status])).toEqual([[1, 'running']]);

    holder.kill();
    expect(await holder.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // Its IPC channel closed, the sync process ends the run as aborted and exits.
    await eventually(() => processGone(syncPid) || undefined, undefined, 'the sync process gone');
    await database.afterKill(syncPid);
    upstream.faults.clear('latency');

    const third = spawnCliSync(upstream.url, dbFile);
    expect(await third.exited, third.stderr).toEqual({ code: EXIT.ok, signal: null });
    expect(third.stdout).toMatch(/^run 2 succeeded: 40 entries on 5 pages; 40 added/m);
    const runs = await runRows(database);
    expect(runs.map(({ errorMessage: _, ...rest }) => rest)).toEqual([
      { id: 1, status: 'aborted', holderPid: syncPid, errorCode: 'RUN_ABORTED' },
      { id: 2, status: 'succeeded', holderPid: runs[1]?.holderPid ?? null, errorCode: null },
    ]);
    expect(runs[0]?.errorMessage).toContain('the process that started the sync is gone');
    // The third's own sync process held its run.
    expect(runs[1]?.holderPid).not.toBe(syncPid);
  });
});
