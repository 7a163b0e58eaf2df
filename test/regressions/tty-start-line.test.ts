import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HAS_SCRIPT, ensureBuilt, runCliOnTerminal } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

// Regression: on a terminal, `start` said where it answers only inside a JSON line of fields, and the
// demo's "the data is invented" only in a separate warning. The line a person reads says both, plainly
// (issue 21: one human line, not a log record with its fields).
describe.skipIf(!HAS_SCRIPT)('start on a terminal (needs script(1) from util-linux)', () => {
  it('the demo says in one line where it answers and that the data is invented', async () => {
    const db = join(tempDir(), 'demo.db');
    const start = runCliOnTerminal(['start', '--port', '0', '--db', db], { DEMO_UPSTREAM_PORT: '0' });
    const { line, output } = await start.until((text) => {
      const found = text.split('\n').find((l) => l.includes('coworker-mirror: serving'));
      return found === undefined ? undefined : { line: found, output: text };
    });
    expect(line).toMatch(
      /^coworker-mirror: serving http:\/\/127\.0\.0\.1:\d+\/ — the demo \(the data is invented\), db \S+demo\.db$/,
    );
    expect(output).not.toContain('coworker-mirror started');
  });
});
