import { hostname } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { runs } from '../../src/db/schema.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { canRunAsPid1, spawnCliSyncAsPid1 } from './sync-child.js';

function runRows(dbFile: string) {
  const store = openDatabase(dbFile);
  try {
    return drizzle(store.sqlite)
      .select({
        id: runs.id,
        status: runs.status,
        holderPid: runs.holderPid,
        holderHost: runs.holderHost,
        errorCode: runs.errorCode,
      })
      .from(runs)
      .orderBy(runs.id)
      .all();
  } finally {
    store.close();
  }
}

/**
 * The Docker image runs `node dist/cli.js start` as PID 1, and a restarted container keeps its
 * hostname. So the process that starts after a crash (OOM kill, `docker kill`, SIGKILL at the end
 * of `docker stop`) has the very pid and host recorded in the run it left `running`.
 */
describe.skipIf(!canRunAsPid1())(
  'regression: a run left running by a killed PID 1 blocks every later PID 1 on that host',
  () => {
    it('a sync restarted with the same pid on the same host (a container restart) recovers the killed run', async () => {
      const dbFile = join(tempDir(), 'mirror.db');
      const upstream = await simulatedUpstream({ seed: 5, count: 40 });
      upstream.faults.set({ latency: 120_000 });

      const crashed = spawnCliSyncAsPid1(upstream.url, dbFile);
      const started = await crashed.waitFor((line) => line.msg === 'sync started');
      expect(started, `the first sync never started:\n${crashed.stdout}\n${crashed.stderr}`).toBeDefined();
      // The run's holder is the sync process `sync` starts (src/sync/isolated-sync.ts), a child of
      // PID 1 in its namespace, as each sync of a container's `start` is: the same pid at a restart.
      const syncPid = runRows(dbFile)[0]?.holderPid ?? null;
      expect(syncPid).not.toBe(1);
      expect(runRows(dbFile)).toEqual([
        { id: 1, status: 'running', holderPid: syncPid, holderHost: hostname(), errorCode: null },
      ]);
      crashed.kill();
      await crashed.exited;
      upstream.faults.clear('latency');

      const restarted = spawnCliSyncAsPid1(upstream.url, dbFile);
      const exit = await restarted.exited;
      // Failed before runs carried a holder token: exit 4, "another sync holds the lock: run 1 (pid 1
      // on <host>, ...)": the new process took the dead run for its own (holderPid === self.pid → alive).
      // Its log lines go to stderr; none may be a warning or an error.
      const complaints = restarted.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{"level":30'));
      expect({ exit, complaints }).toEqual({
        exit: { code: EXIT.ok, signal: null },
        complaints: [],
      });
      expect(runRows(dbFile)).toEqual([
        { id: 1, status: 'aborted', holderPid: syncPid, holderHost: hostname(), errorCode: 'RUN_ABORTED' },
        { id: 2, status: 'succeeded', holderPid: syncPid, holderHost: hostname(), errorCode: null },
      ]);
    });
  },
);
