import { describe, expect, it } from 'vitest';
import { LEASE_MS } from '../../src/sync/run-lock.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

type Store = ReturnType<typeof tempDatabase>;

function runningRunOnAnotherHost(store: Store, heartbeatAgoMs: number): void {
  const at = new Date(Date.now() - heartbeatAgoMs).toISOString();
  store.sqlite
    .prepare(
      `insert into runs (status, started_at, upstream, holder_pid, holder_host, holder_token, heartbeat_at)
       values ('running', ?, 'http://upstream.invalid', 1, 'another-host', 'their-token', ?)`,
    )
    .run(at, at);
}

describe('the lock held by a process on another host', () => {
  it('holds while its heartbeat is fresh', async () => {
    const store = tempDatabase();
    runningRunOnAnotherHost(store, 1_000);
    const upstream = await simulatedUpstream({ count: 3 });
    await expect(sync(store, upstream)).rejects.toMatchObject({
      code: 'SYNC_LOCKED',
      details: { runId: 1, host: 'another-host' },
    });
  });

  it('is taken over once the heartbeat is older than the lease; the old run is recorded as aborted', async () => {
    const store = tempDatabase();
    runningRunOnAnotherHost(store, LEASE_MS + 5_000);
    const upstream = await simulatedUpstream({ count: 3 });
    const summary = await sync(store, upstream);
    expect(summary.runId).toBe(2);
    expect(await store.getRun(1)).toMatchObject({ status: 'aborted', errorCode: 'RUN_ABORTED' });
    expect((await store.getRun(1))?.errorMessage).toMatch(/another-host.*no heartbeat/);
  });
});
