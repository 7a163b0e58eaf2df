import { describe, expect, it } from 'vitest';
import { SnapshotHolder } from '../../src/http/snapshot-holder.js';
import { silentLogger } from '../../src/logger.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('one definition of the latest successful run', () => {
    it('regression: runs finishing out of id order no longer rebuild the snapshot on every poll', async () => {
      const store = await fresh();
      const upstream = await simulatedUpstream({ count: 12 });
      await sync(store, upstream);
      upstream.data.add(1);
      await sync(store, upstream);
      // Run 2 finished first (clocks step back, or a run by hand from another host).
      await storeRows(store, "update runs set finished_at = '2000-01-01T00:00:00.000Z' where id = 2");

      expect((await store.latestSucceededRun())?.id).toBe(1);
      expect(await store.latestSucceededRunId()).toBe(1);
      const holder = new SnapshotHolder(store, silentLogger());
      expect(await holder.refresh()).toBe(true);
      expect(holder.info?.runId).toBe(1);
      expect(await holder.refresh()).toBe(false);
      expect(await holder.refresh()).toBe(false);
    });
  });
});
