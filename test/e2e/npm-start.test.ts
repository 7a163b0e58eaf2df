import { spawn } from 'node:child_process';
import { createServer, connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ROOT, eventually } from '../helpers/process.js';
import { WAIT_MS } from '../helpers/patience.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });
}

/** `npm start` as a person types it: npm, its shell and node between the signal and the server. */
function npmStart(env: Record<string, string>) {
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so cleanup can reach a server that npm left behind.
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  onTestFinished(async () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the whole group has exited
    }
    await exited;
  });
  return { child, exited, output: () => output };
}

describe('npm start', () => {
  // Ctrl-C in a terminal is SIGINT to the foreground process group: npm and node at once.
  it.each([
    ['SIGTERM', 'npm'],
    ['SIGINT', 'npm'],
    ['SIGINT', 'group'],
  ] as const)(
    '%s to %s (npm alone, or its process group as Ctrl-C) stops the server, frees the port and exits 0',
    async (signal, to) => {
      const upstream = await simulatedUpstream({ seed: 21, count: 10 });
      const port = await freePort();
      const run = npmStart({
        UPSTREAM_URL: upstream.url,
        PORT: String(port),
        DATABASE_PATH: join(tempDir(), 'mirror.db'),
        SYNC_CRON: '0 0 1 1 *',
      });
      await eventually(
        async () => ((await fetch(`http://127.0.0.1:${port}${LIST_PATH}`)).status === 200 ? true : undefined),
        WAIT_MS,
        `the list endpoint; output so far:\n${run.output()}`,
      );
      if (to === 'npm') run.child.kill(signal);
      else process.kill(-(run.child.pid ?? 0), signal);
      expect(await run.exited).toBe(0);
      expect(await refused(port)).toBe(true);
    },
  );
});
