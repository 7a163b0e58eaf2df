import { describe, expect, it } from 'vitest';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const drift = (value: number) =>
  Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`field_${i}`, `value ${value}`]));

// Regression: one coworker with 10,000 extra fields made a 1.9 MB coworker page that took 1–2 s of
// the server's event loop to render. What a page renders is bounded by bytes, as values are.
describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('the coworker page is bounded by bytes', () => {
    it('10,000 extra fields changed once: the page stays under 512 KB and says what it left out', async () => {
      const [row] = generateCoworkers(4, 1);
      if (!row) throw new Error('one coworker was generated');
      const store = await fresh();
      await sync(store, await simulatedUpstream({ entries: [{ ...row, ...drift(1) }] }));
      await sync(store, await simulatedUpstream({ entries: [{ ...row, ...drift(2) }] }));
      const mirror = await startMirror(store);
      const res = await fetch(`${mirror.url}/coworkers/${row.uuid}/`);
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(Buffer.byteLength(html)).toBeLessThan(512 * 1024);
      expect(html).toMatch(
        /… [\d,]+ more changes not shown \(a page shows at most 192 KiB of them\); the history API has them all\./,
      );
      expect(html).toMatch(/… [\d,]+ more fields not shown/);
      // The coworker's own fields come first and are shown.
      expect(html).toContain(String(row.name).replaceAll('&', '&amp;'));
    });
  });
});
