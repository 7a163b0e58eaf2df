import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, HAS_SCRIPT, runCliOnTerminal } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

// Regression: on a terminal a failing `sync` printed eight JSON lines with two stack traces before
// its one good line. Log lines on a terminal are for people: time, level, message; stacks at debug.
describe.skipIf(!HAS_SCRIPT)('a failing sync on a terminal (needs script(1) from util-linux)', () => {
  it('prints time-level-message lines without stacks, then the line that says what failed', async () => {
    const db = join(tempDir(), 'mirror.db');
    const { code, output } = await runCliOnTerminal(
      ['sync', '--upstream', 'http://127.0.0.1:9', '--db', db],
      { UPSTREAM_MAX_ATTEMPTS: '2' },
    ).ended();
    expect(code).toBe(3);
    const lines = output.split('\n').filter((line) => line.trim() !== '');
    expect(lines.at(-1)).toMatch(
      /^coworker-mirror: sync failed \(run 1\) \[UPSTREAM_NETWORK\]: GET http:\/\/127\.0\.0\.1:9\//,
    );
    for (const line of lines.slice(0, -1)) {
      expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] (WARN|ERROR): \S/);
    }
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toMatch(/^\{/m);
  });
});
