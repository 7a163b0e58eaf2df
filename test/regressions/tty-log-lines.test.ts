import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_CLI, ROOT, ensureBuilt } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
// eslint-disable-next-line no-control-regex -- colour codes are what is stripped
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, '');

/** Runs the CLI on a pseudo-terminal (util-linux script), as a person at a terminal would. */
function onTerminal(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, BUILT_CLI, ...args]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
    .join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'xterm', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output: plain(output) })));
}

// Regression: on a terminal a failing `sync` printed eight JSON lines with two stack traces before
// its one good line. Log lines on a terminal are for people: time, level, message; stacks at debug.
describe.skipIf(!hasScript)('a failing sync on a terminal (needs script(1) from util-linux)', () => {
  it('prints time-level-message lines without stacks, then the line that says what failed', async () => {
    const db = join(tempDir(), 'mirror.db');
    const { code, output } = await onTerminal(['sync', '--upstream', 'http://127.0.0.1:9', '--db', db], {
      UPSTREAM_MAX_ATTEMPTS: '2',
    });
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
