import { describe, expect, it } from 'vitest';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');

// Regression: the /coworkers/ page's "as of run N" and its rows lagged the served snapshot, once by
// 6 runs: the first request after new runs was answered from the directory of an older one.
describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('the /coworkers/ page keeps up with the runs', () => {
    it('after six more runs, the next request shows the newest run and its coworkers', async () => {
      const rows = generateCoworkers(6, 7);
      const store = await fresh();
      await sync(store, await simulatedUpstream({ entries: rows.slice(0, 1) }));
      const mirror = await startMirror(store);
      const page = async () => text(await (await fetch(`${mirror.url}/coworkers/?status=all`)).text());
      expect(await page()).toContain('as of run 1');
      for (let n = 2; n <= 7; n++) await sync(store, await simulatedUpstream({ entries: rows.slice(0, n) }));
      const after = await page();
      expect(after).toContain('as of run 7');
      for (const row of rows) expect(after).toContain(String(row.name).slice(0, 20));
    });
  });
});
