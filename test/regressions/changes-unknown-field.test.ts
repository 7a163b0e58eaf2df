import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runChangesCommand } from '../../src/cli/history-commands.js';
import { openDatabase } from '../../src/db/open.js';
import { ConfigError } from '../../src/errors.js';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { testConfig } from '../helpers/config.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

const drift = (value: number) =>
  Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, value]));

// Regression: `changes --field nope` printed an 80 KB error listing 10,000 drift fields.
describe('changes --field with an unknown field', () => {
  it('names the first few fields and counts the rest', async () => {
    const [row] = generateCoworkers(9, 1);
    const file = join(tempDir(), 'mirror.db');
    const store = openDatabase(file);
    await sync(store, await simulatedUpstream({ entries: [{ ...row, ...drift(1) }] }));
    await sync(store, await simulatedUpstream({ entries: [{ ...row, ...drift(2) }] }));
    store.close();
    const options = {
      since: undefined,
      until: undefined,
      field: 'nope',
      uuid: undefined,
      kind: undefined,
      limit: 10,
      json: false,
    };
    const out = { write: () => undefined, style: { color: false, now: 0 } };
    let thrown: unknown;
    try {
      await runChangesCommand(testConfig({ DATABASE_PATH: file }), options, out);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).issues).toEqual([
      {
        name: '--field',
        problem:
          'unknown field "nope"; the fields are name, post, emoji_file, emoji_file_webm, show_image, images, ' +
          'f0, f1, f10, f100, f1000, f1001 and 9994 more (changes --json lists every change with its field)',
      },
    ]);
  });
});
