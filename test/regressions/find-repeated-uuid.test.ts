import { describe, expect, it } from 'vitest';
import { runFindCommand, runHistoryCommand } from '../../src/cli/history-commands.js';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { testConfig } from '../helpers/config.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { databaseEnv, STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const plain = { color: false, now: 0 };

// Regression: `find "<a current name>"` exited 7 when that name was carried by the second appearance
// of a uuid listed twice: the search read only the newest version of the uuid, the first appearance's.
describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('find with a uuid listed twice', () => {
    it('finds the name of either appearance, once per uuid', async () => {
      const [a, b] = generateCoworkers(5, 2);
      if (!a || !b) throw new Error('two coworkers were generated');
      const uuid = a.uuid;
      const first = { ...a, name: 'Ada Quill' };
      const second = { ...a, name: 'Ada Second', post: 'Second post' };
      const store = await fresh();
      await sync(store, await simulatedUpstream({ entries: [first, b, second] }));
      // The first appearance changes later: its version is now the uuid's newest.
      await sync(store, await simulatedUpstream({ entries: [{ ...first, name: 'Ada Renamed' }, b, second] }));
      const config = testConfig(databaseEnv(store));
      const lines: string[] = [];
      const out = { write: (line: string) => lines.push(line), style: plain };
      expect(await runFindCommand(config, 'Ada Second', true, out)).toBe(0);
      expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
        { uuid, name: 'Ada Second', post: 'Second post', removed: false },
      ]);
      lines.length = 0;
      expect(await runFindCommand(config, 'Ada', true, out)).toBe(0);
      expect(lines.map((l) => (JSON.parse(l) as { uuid: string }).uuid)).toEqual([uuid]);
      lines.length = 0;
      expect(await runHistoryCommand(config, { name: 'Ada Second' }, true, out)).toBe(0);
      expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ type: 'coworker', uuid });
    });
  });
});
