import { createServer, type Server } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { startSimulatedSite } from '../../src/simulated-upstream/index.js';
import { freePortPair } from '../helpers/free-port-pair.js';

const names = { port: '--port', host: '--host' };

/** A listener on 127.0.0.1:`port`, closed when the test ends. */
async function occupy(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}

/** What `startSimulatedSite` refused with: its issues, when it is the ConfigError a person acts on. */
async function refusal(start: Promise<unknown>): Promise<unknown> {
  const error = await start.then(
    () => new Error('expected a refusal'),
    (thrown: unknown) => thrown,
  );
  return error instanceof ConfigError ? error.issues : error;
}

describe('the simulated site: its upstream, and its media host on the next port', () => {
  it('a busy upstream port names the port setting, and the media host it started first is closed again', async () => {
    const port = await freePortPair();
    await occupy(port);
    expect(await refusal(startSimulatedSite({ seed: 1, count: 3, port, names }))).toEqual([
      {
        name: '--port',
        problem: `cannot listen on 127.0.0.1:${port} (EADDRINUSE); choose another --port (0: any free port)`,
      },
    ]);
    // The media host is not left listening on the next port.
    await occupy(port + 1);
  });

  it('a host that is not an address of this machine names the host setting', async () => {
    // 192.0.2.1 is TEST-NET-1: documentation only, never an address of this machine.
    expect(
      await refusal(startSimulatedSite({ seed: 1, count: 3, host: '192.0.2.1', port: 0, names })),
    ).toEqual([
      {
        name: '--host',
        problem: 'cannot listen on "192.0.2.1" (EADDRNOTAVAIL): it is not an address of this machine',
      },
    ]);
  });

  it('the last port leaves none for the media host: refused before anything listens', async () => {
    expect(await refusal(startSimulatedSite({ seed: 1, count: 3, port: 65535, names }))).toEqual([
      {
        name: '--port',
        problem: '65535 leaves no next port for the media host; choose one below 65535 (0: any free port)',
      },
    ]);
  });
});
