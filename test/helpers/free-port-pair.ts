import { createServer, type Server } from 'node:net';

function listens(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(null));
    probe.listen(port, '127.0.0.1', () => resolve(probe));
  });
}

/**
 * A free port whose next one is free too: a simulated upstream's media host (the demo's, or
 * `simulate`'s) listens on the port after the upstream's. Drawn below Linux's ephemeral range
 * (32768+), where the outgoing connections of tests running beside this one would otherwise take
 * the second port now and then.
 */
export async function freePortPair(): Promise<number> {
  for (;;) {
    const port = 20_000 + 2 * Math.floor(Math.random() * 5_000);
    const [a, b] = [await listens(port), await listens(port + 1)];
    for (const server of [a, b]) if (server) await new Promise<void>((r) => server.close(() => r()));
    if (a && b) return port;
  }
}
