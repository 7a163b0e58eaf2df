import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BUILT_CLI, ROOT, ensureBuilt } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
// eslint-disable-next-line no-control-regex -- colour codes are what is stripped
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, '');

// Regression: on a terminal, `start` said where it answers only inside a JSON line of fields, and the
// demo's "the data is invented" only in a separate warning. The line a person reads says both, plainly
// (issue 21: one human line, not a log record with its fields).
describe.skipIf(!hasScript)('start on a terminal (needs script(1) from util-linux)', () => {
  it('the demo says in one line where it answers and that the data is invented', async () => {
    const db = join(tempDir(), 'demo.db');
    const command = `'${process.execPath}' '${BUILT_CLI}' start --port 0 --db '${db}'`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TERM: 'xterm',
        DEMO_UPSTREAM_PORT: '0',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
      detached: true,
    });
    const exited = new Promise((resolve) => child.once('close', resolve));
    onTestFinished(async () => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      await exited;
    });
    let output = '';
    const line = await new Promise<string>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += plain(chunk.toString('utf8'));
        const found = output.split('\n').find((l) => l.includes('coworker-mirror: serving'));
        if (found !== undefined) resolve(found);
      });
    });
    expect(line).toMatch(
      /^coworker-mirror: serving http:\/\/127\.0\.0\.1:\d+\/ — the demo \(the data is invented\), db \S+demo\.db$/,
    );
    expect(output).not.toContain('coworker-mirror started');
  });
});
