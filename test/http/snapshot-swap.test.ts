import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/http/build-in-slices.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('swapping in the next snapshot', () => {
    it('regression: shares the held pages whose bytes did not change (a swap held two whole copies)', async () => {
      const store = await fresh();
      const upstream = await simulatedUpstream({ seed: 4, count: 80, pageSize: 8 });
      await sync(store, upstream);
      upstream.data.edit(1, 'post');
      await sync(store, upstream);
      const [first, second] = [await store.getRun(1), await store.getRun(2)];
      if (!first || !second) throw new Error('two runs expected');
      const held = await buildSnapshot(store, first);
      const next = await buildSnapshot(store, second, held);
      const alone = await buildSnapshot(store, second);
      // The same bytes as a build that shares nothing…
      expect(next.pageTails.map((t) => t.toString())).toEqual(alone.pageTails.map((t) => t.toString()));
      expect([...next.entryValues]).toEqual([...alone.entryValues]);
      // …in the held snapshot's own Buffers, but for the one page that changed.
      const shared = next.pageTails.filter((tail, i) => tail === held.pageTails[i]);
      expect(shared).toHaveLength(next.numPages - 1);
    });
  });
});
