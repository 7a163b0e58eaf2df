import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { WAIT_MS } from '../helpers/patience.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt());

/** Whether anything accepts a connection on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A keep-alive connection that has had one answer and stays open, idle. */
async function idleConnection(port: number): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  onTestFinished(() => void socket.destroy());
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    socket.once('data', () => resolve());
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

async function blockedPort(): Promise<number> {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => blocker.close(() => r())));
  return (blocker.address() as AddressInfo).port;
}

describe('coworker-mirror start with INTERNAL_PORT', () => {
  it('serves the list and health checks on PORT, the rest on INTERNAL_PORT, and stops both on SIGTERM, exit 0', async () => {
    const upstream = await simulatedUpstream({ seed: 21, count: 12 });
    const proc = runCli(['start', '--port', '0'], {
      UPSTREAM_URL: upstream.url,
      DATABASE_PATH: join(tempDir(), 'mirror.db'),
      INTERNAL_PORT: '0',
      SYNC_CRON: '0 0 1 1 *',
      LOG_LEVEL: 'info',
      SNAPSHOT_POLL: '100ms',
    });
    const line = await proc.waitFor(/"msg":"coworker-mirror started"/);
    const { url, internalUrl } = JSON.parse(line) as { url: string; internalUrl: string };
    expect(internalUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(internalUrl).not.toBe(url);
    await eventually(
      async () => ((await fetch(`${url}${LIST_PATH}`)).status === 200 ? true : undefined),
      WAIT_MS,
      'the first snapshot served',
    );
    const statuses = async (base: string) =>
      Promise.all(
        [
          LIST_PATH,
          '/healthz',
          '/readyz',
          '/metrics',
          '/api/mirror/runs/',
          '/',
          '/api/mirror/changes.atom',
        ].map(async (path) => [path, (await fetch(`${base}${path}`)).status] as const),
      );
    expect(await statuses(url)).toEqual([
      [LIST_PATH, 200],
      ['/healthz', 200],
      ['/readyz', 200],
      ['/metrics', 404],
      ['/api/mirror/runs/', 404],
      ['/', 404],
      ['/api/mirror/changes.atom', 404],
    ]);
    expect(await statuses(internalUrl)).toEqual([
      [LIST_PATH, 200],
      ['/healthz', 200],
      ['/readyz', 200],
      ['/metrics', 200],
      ['/api/mirror/runs/', 200],
      ['/', 200],
      ['/api/mirror/changes.atom', 200],
    ]);

    // An idle keep-alive client on either listener does not hold the shutdown.
    const ports = [Number(new URL(url).port), Number(new URL(internalUrl).port)];
    for (const port of ports) await idleConnection(port);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    expect(await Promise.all(ports.map(accepts))).toEqual([false, false]);
  });

  it('a busy INTERNAL_PORT stops it with exit 2 naming INTERNAL_PORT', async () => {
    const port = await blockedPort();
    const proc = runCli(['start', '--port', '0'], {
      INTERNAL_PORT: String(port),
      DATABASE_PATH: join(tempDir(), 'm.db'),
      SYNC_CRON: '0 0 1 1 *',
      DEMO_UPSTREAM_PORT: '0',
    });
    const { code } = await proc.exited;
    expect(code).toBe(2);
    expect(proc.output()).toContain(
      `INTERNAL_PORT / INTERNAL_HOST: cannot listen on 127.0.0.1:${port} (EADDRINUSE); choose another INTERNAL_PORT or INTERNAL_HOST`,
    );
  });

  it('INTERNAL_PORT equal to PORT on one address is refused before anything starts, exit 2', async () => {
    const proc = runCli(['start'], {
      PORT: '8123',
      INTERNAL_PORT: '8123',
      DATABASE_PATH: join(tempDir(), 'm.db'),
    });
    const { code } = await proc.exited;
    expect(code).toBe(2);
    expect(proc.output()).toContain(
      'INTERNAL_PORT: 127.0.0.1:8123 is where PORT listens already (127.0.0.1:8123): the internal listener needs a port of its own; choose another INTERNAL_PORT',
    );
  });
});
