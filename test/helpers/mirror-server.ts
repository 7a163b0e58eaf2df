import { onTestFinished } from 'vitest';
import type { MirrorDatabase } from '../../src/db/open.js';
import { buildServer, type MirrorServer, type ServerOptions } from '../../src/http/server.js';
import type { SyncTrigger } from '../../src/http/api/admin-sync-route.js';
import { silentLogger } from '../../src/logger.js';

export const defaultServerOptions: ServerOptions = {
  trustProxy: false,
  publicBaseUrl: null,
  cacheControl: null,
  staleAfterMs: 3_600_000,
  snapshotPollMs: 50,
  adminToken: null,
  forwardedAllowIps: ['127.0.0.1'],
  keepAliveTimeoutMs: 65_000,
  metricsToken: null,
  listCacheBytes: 32 * 1024 * 1024,
};

/** A real mirror server on 127.0.0.1:0, closed when the test ends. */
export async function startMirror(
  store: MirrorDatabase,
  options: Partial<ServerOptions> = {},
  syncTrigger?: SyncTrigger,
): Promise<MirrorServer & { url: string; port: number }> {
  const server = await buildServer({
    store,
    logger: silentLogger(),
    options: { ...defaultServerOptions, ...options },
    ...(syncTrigger ? { syncTrigger } : {}),
  });
  const url = await server.listen(0, '127.0.0.1');
  onTestFinished(() => server.close());
  return Object.assign(server, { url, port: Number(new URL(url).port) });
}
