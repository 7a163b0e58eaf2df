import { beforeAll, describe, expect, it } from 'vitest';
import { runHistoryCommand } from '../../src/cli/history-commands.js';
import { EXIT, exitCodeFor } from '../../src/cli/exit-codes.js';
import { errorReport } from '../../src/cli/report.js';
import { isMirrorError, type MirrorError } from '../../src/errors.js';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { testConfig } from '../helpers/config.js';
import { databaseEnv, STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';

// Regression: `history --name ewa` that four coworkers match exited 2 saying "invalid configuration:
// --name: 4 coworkers match", a configuration problem it is not, naming none of them on stderr.
// Now it says what it is and lists the matches, their names (the upstream's) drawn for a terminal.

const plain = { color: false, now: 0 };
/** A name that would reorder the line after it and clear the screen, were it obeyed. */
const HOSTILE = 'Ewa \u202egnorw\u2066 \u001b[2J';

beforeAll(() => ensureBuilt());

async function fourEwas(fresh: () => Promise<Parameters<typeof sync>[0] & { file: string }>) {
  const [a, b, c, d, e] = generateCoworkers(9, 5);
  if (!a || !b || !c || !d || !e) throw new Error('five coworkers were generated');
  const ewas = [
    { ...a, name: 'Ewa Adamska' },
    { ...b, name: 'Ewa Bąk' },
    { ...c, name: HOSTILE },
    { ...d, name: 'Ewa-Maria Duda' },
  ];
  const store = await fresh();
  const upstream = await simulatedUpstream({ entries: [...ewas, { ...e, name: 'Ines Ortolan' }] });
  await sync(store, upstream);
  // Ewa Bąk leaves: a removed coworker still matches, and says so.
  upstream.data.setEntries([ewas[0], ewas[2], ewas[3], e].filter((x) => x !== undefined));
  await sync(store, upstream);
  return { store, uuids: ewas.map((x) => x.uuid) };
}

describe.each(STORE_KINDS)('history --name that several coworkers match, on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('fails as NAME_AMBIGUOUS (exit 2), listing the matches with their names drawn for a terminal', async () => {
    const { store, uuids } = await fourEwas(fresh);
    const [adamska, bak, hostile, duda] = uuids;
    const lines: string[] = [];
    const out = { write: (line: string) => lines.push(line), style: plain };
    const failure = await runHistoryCommand(testConfig(databaseEnv(store)), { name: 'ewa' }, false, out).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(isMirrorError(failure)).toBe(true);
    const error = failure as MirrorError;
    expect(error.code).toBe('NAME_AMBIGUOUS');
    expect(exitCodeFor(error.code)).toBe(EXIT.usage);
    expect(error.details).toEqual({
      name: 'ewa',
      count: 4,
      matches: [
        { uuid: adamska, name: 'Ewa Adamska' },
        { uuid: hostile, name: HOSTILE },
        { uuid: duda, name: 'Ewa-Maria Duda' },
        { uuid: bak, name: 'Ewa Bąk' },
      ],
    });
    expect(errorReport(error, { debug: false })).toBe(
      `coworker-mirror: --name "ewa" matches 4 coworkers: "Ewa Adamska" (uuid ${adamska}), ` +
        `"Ewa <U+202E>gnorw<U+2066> \\u001b[2J" (uuid ${hostile}), "Ewa-Maria Duda" (uuid ${duda}), ` +
        `"Ewa Bąk" (uuid ${bak}, removed); give more of the name, or the uuid ` +
        '(`history <uuid>`; `find "ewa"` lists them)\n',
    );
    // Nothing on stdout: a `--json` reader gets no table it cannot parse.
    expect(lines).toEqual([]);
  });
});

describe('history --name that several coworkers match, from the built CLI', () => {
  const fresh = storeMaker('sqlite');

  it('exits 2 with the one message on stderr and nothing on stdout', async () => {
    const { store } = await fourEwas(fresh);
    const proc = runCli(['history', '--name', 'ewa', '--json', '--db', store.file], {});
    let stdout = '';
    proc.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    expect((await proc.exited).code).toBe(EXIT.usage);
    expect(stdout).toBe('');
    expect(proc.output()).toMatch(
      /^coworker-mirror: --name "ewa" matches 4 coworkers: "Ewa Adamska" \(uuid /,
    );
    expect(proc.output()).not.toContain('invalid configuration');
    for (const raw of ['\u202e', '\u2066', '\u001b']) expect(proc.output()).not.toContain(raw);
  });
});
