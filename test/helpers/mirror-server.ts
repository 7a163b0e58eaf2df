import type { Store } from '../../src/db/store.js';
import type { ServerConfig } from '../../src/config/load-config.js';
import { buildServer, type MirrorServer, type ServerDeps } from '../../src/http/server.js';
import type { SyncTrigger } from '../../src/http/api/admin-sync-route.js';
import { silentLogger } from '../../src/logger.js';
import { testConfig } from './config.js';
import { untilTestEnds, type Defer } from './scope.js';

/** The server settings tests run with (see testConfig). */
export const defaultServerConfig: ServerConfig = testConfig().server;

/**
 * Server settings a test changes, the mirrored media it serves (none unless given), and when the
 * server is closed (when the test ends unless given).
 */
export type MirrorOptions = Partial<ServerConfig> & {
  media?: ServerDeps['config']['media'];
  defer?: Defer;
};

/** A real mirror server on 127.0.0.1:0. */
export async function startMirror(
  store: Store,
  options: MirrorOptions = {},
  syncTrigger?: SyncTrigger,
): Promise<MirrorServer & { url: string; port: number }> {
  const { media, defer = untilTestEnds, ...server } = options;
  const mirror = await buildServer({
    store,
    logger: silentLogger(),
    config: { server: { ...defaultServerConfig, ...server }, ...(media ? { media } : {}) },
    ...(syncTrigger ? { syncTrigger } : {}),
  });
  const url = await mirror.listen(0, '127.0.0.1');
  defer(() => mirror.close());
  return Object.assign(mirror, { url, port: Number(new URL(url).port) });
}
