import { describe, expect, it } from 'vitest';
import { runChangesCommand } from '../../src/cli/history-commands.js';
import { ConfigError } from '../../src/errors.js';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { testConfig } from '../helpers/config.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { databaseEnv, STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const drift = (value: number) =>
  Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, value]));

// Regression: `changes --field nope` printed an 80 KB error listing 10,000 drift fields.
describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('changes --field with an unknown field', () => {
    it('names the first few fields and counts the rest', async () => {
      const [row] = generateCoworkers(9, 1);
      const store = await fresh();
      await sync(store, await simulatedUpstream({ entries: [{ ...row, ...drift(1) }] }));
      await sync(store, await simulatedUpstream({ entries: [{ ...row, ...drift(2) }] }));
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
        await runChangesCommand(testConfig(databaseEnv(store)), options, out);
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
});
