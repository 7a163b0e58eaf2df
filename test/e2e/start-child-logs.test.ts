import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BUILT_CLI, ROOT, ensureBuilt, runCli } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
// eslint-disable-next-line no-control-regex -- colour codes are what is stripped
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, '');

/** A pretty line as `start` writes it on a terminal: time, level, message, then the fields. */
const PRETTY = /^\[\d\d:\d\d:\d\d\] (INFO|WARN|ERROR|DEBUG): \S/;

// Regression: on a terminal `start` logged lines for people while its sync child, whose stderr is
// a pipe to `start`, logged raw JSON records into the same terminal. The child now logs as its
// parent does.
describe.skipIf(!hasScript)('the sync child of start on a terminal (needs script(1) from util-linux)', () => {
  it('logs the pretty lines start logs: no JSON record reaches the terminal', async () => {
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
    // The child's last line of its run; every line of the child comes before it.
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += plain(chunk.toString('utf8'));
        if (/sync succeeded.*\n/.test(output)) resolve();
      });
    });
    const lines = output.split('\n').filter((line) => line.trim() !== '');
    const ofTheChild = lines.filter((line) =>
      /\b(sync started|sync progress|media mirrored|sync succeeded)\b/.test(line),
    );
    expect(ofTheChild.length).toBeGreaterThanOrEqual(3);
    for (const line of ofTheChild) expect(line).toMatch(PRETTY);
    expect(lines.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
  });
});

describe('the sync child of start in a log collector (no terminal)', () => {
  it("regression: every line of start and its child is a JSON record, a failed sync's included", async () => {
    const upstream = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('this is not json');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
    const { port } = upstream.address() as AddressInfo;
    const db = join(tempDir(), 'mirror.db');
    const start = runCli(['start', '--port', '0', '--db', db], {
      UPSTREAM_URL: `http://127.0.0.1:${port}`,
    });
    await start.waitFor(/"msg":"sync failed"/);
    start.child.kill('SIGTERM');
    expect(await start.exited).toEqual({ code: 0, signal: null });

    const lines = start
      .output()
      .split('\n')
      .filter((line) => line !== '');
    const notJson = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== 'object';
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    const records = lines.map((line) => JSON.parse(line) as { msg?: string; code?: string; pid?: number });
    const failed = records.filter((r) => r.msg === 'sync failed');
    expect(failed).toEqual([expect.objectContaining({ level: 50, code: 'UPSTREAM_INVALID_JSON' })]);
    // The child's own record (its own pid), as it wrote it.
    expect(failed[0]?.pid).not.toBe(start.child.pid);
  });
});
