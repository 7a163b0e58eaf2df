import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { rigWithMediaChange } from '../media/harness.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

// Regression: `media_changed` rows of the CSV feed had an empty `name` (it was read from the change's
// new value, which holds a URL and a hash, not an entry), and their sentence named the uuid.
describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('media_changed rows of the CSV feed', () => {
    it('name the coworker, in the name column and in the sentence', async () => {
      const rig = await rigWithMediaChange(4, await fresh());
      const mirror = await startMirror(rig.store);
      const csv = await (await fetch(`${mirror.url}/api/mirror/changes.csv?kind=media_changed`)).text();
      const rows = parse<Record<string, string>>(csv.replace(/^\uFEFF/, ''), { columns: true });
      const names = new Map(
        rig.upstream.data.entries().map((e) => [String(e.uuid), String((e as { name?: unknown }).name)]),
      );
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.kind).toBe('media_changed');
        expect(row.name).toBe(names.get(row.uuid ?? ''));
        // The name first, then (for a later appearance) which one, then what changed.
        expect(row.sentence?.startsWith(row.name ?? '?'), row.sentence).toBe(true);
        expect(row.sentence, row.sentence).toMatch(/^[^:]+: new /);
      }
    });
  });
});
