import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `host:port` (127.0.0.1 and a free port unless given) and resolves to the origin. */
export async function listenOnLoopback(
  server: Server,
  options: { host?: string | undefined; port?: number | undefined },
): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** Runs `answer` after `ms` (at once when 0), holding the timer in `timers` so closing cancels it. */
export function afterLatency(timers: Set<NodeJS.Timeout>, ms: number, answer: () => void): void {
  if (ms === 0) return answer();
  const timer = setTimeout(() => {
    timers.delete(timer);
    answer();
  }, ms);
  timers.add(timer);
}

/** Drops the answers still waiting out their latency and ends every connection. */
export function closeLoopbackServer(server: Server, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    server.close((err) => (err ? reject(err) : resolve()));
    // Hung and keep-alive connections would otherwise hold close() open forever.
    server.closeAllConnections();
  });
}
