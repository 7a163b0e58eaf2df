import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFindCommand, runHistoryCommand } from '../../src/cli/history-commands.js';
import { openDatabase } from '../../src/db/open.js';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { testConfig } from '../helpers/config.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

const plain = { color: false, now: 0 };

// Regression: `find "<a current name>"` exited 7 when that name was carried by the second appearance
// of a uuid listed twice: the search read only the newest version of the uuid, the first appearance's.
describe('find with a uuid listed twice', () => {
  it('finds the name of either appearance, once per uuid', async () => {
    const [a, b] = generateCoworkers(5, 2);
    if (!a || !b) throw new Error('two coworkers were generated');
    const uuid = a.uuid;
    const first = { ...a, name: 'Ada Quill' };
    const second = { ...a, name: 'Ada Second', post: 'Second post' };
    const file = join(tempDir(), 'mirror.db');
    const store = openDatabase(file);
    await sync(store, await simulatedUpstream({ entries: [first, b, second] }));
    // The first appearance changes later: its version is now the uuid's newest.
    await sync(store, await simulatedUpstream({ entries: [{ ...first, name: 'Ada Renamed' }, b, second] }));
    store.close();
    const config = testConfig({ DATABASE_PATH: file });
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
