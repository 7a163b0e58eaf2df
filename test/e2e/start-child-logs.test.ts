import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { HAS_SCRIPT, ensureBuilt, runCli, runCliOnTerminal } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

/** A pretty line as `start` writes it on a terminal: time, level, message, then the fields. */
const PRETTY = /^\[\d\d:\d\d:\d\d\] (INFO|WARN|ERROR|DEBUG): \S/;

// Regression: on a terminal `start` logged lines for people while its sync child, whose stderr is
// a pipe to `start`, logged raw JSON records into the same terminal. The child now logs as its
// parent does.
describe.skipIf(!HAS_SCRIPT)(
  'the sync child of start on a terminal (needs script(1) from util-linux)',
  () => {
    it('logs the pretty lines start logs: no JSON record reaches the terminal', async () => {
      const db = join(tempDir(), 'demo.db');
      const start = runCliOnTerminal(['start', '--port', '0', '--db', db], { DEMO_UPSTREAM_PORT: '0' });
      // The child's last line of its run; every line of the child comes before it.
      const output = await start.until((text) => (/sync succeeded.*\n/.test(text) ? text : undefined));
      const lines = output.split('\n').filter((line) => line.trim() !== '');
      const ofTheChild = lines.filter((line) =>
        /\b(sync started|sync progress|media mirrored|sync succeeded)\b/.test(line),
      );
      expect(ofTheChild.length).toBeGreaterThanOrEqual(3);
      for (const line of ofTheChild) expect(line).toMatch(PRETTY);
      expect(lines.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
    });
  },
);

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
