import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import type { DrfOptions } from '../../../src/drf/respond.js';
import type { PreparedSnapshot } from '../../../src/drf/snapshot.js';
import { createDrfHandler } from '../../../src/http/drf-handler.js';
import { createHttpServer } from '../../../src/http/http-server.js';
import { createRequestMetrics } from '../../../src/http/request-metrics.js';
import { silentLogger } from '../../../src/logger.js';
import { testConfig } from '../../helpers/config.js';

/**
 * The mirror's list endpoint exactly as `buildServer` mounts it (the same node:http server, its
 * parser settings and raw-packet path), over one fixed snapshot: no database needed.
 */
export async function startListServer(
  snapshot: PreparedSnapshot,
  options: DrfOptions & { forwardedAllowIps?: readonly string[]; listCacheBytes?: number },
): Promise<{ port: number; close(): Promise<void> }> {
  const registry = new Registry();
  const metrics = { registry, ...createRequestMetrics(registry) };
  const bound: { server?: Server } = {};
  const drf = createDrfHandler({
    snapshots: { current: snapshot, asOf: () => null },
    metrics,
    logger: silentLogger(),
    options: {
      ...testConfig().server,
      trustProxy: options.trustProxyHeaders,
      publicBaseUrl: options.publicBaseUrl,
      cacheControl: options.cacheControl,
      forwardedAllowIps: options.forwardedAllowIps ?? ['127.0.0.1'],
      listCacheBytes: options.listCacheBytes ?? 1024 * 1024,
    },
    boundAddress: () => {
      const address = bound.server?.address();
      return address && typeof address === 'object'
        ? { name: address.address, port: String(address.port) }
        : null;
    },
  });
  const created = createHttpServer(testConfig().server, drf, (_req, res) => {
    res.writeHead(404).end();
  });
  bound.server = created;
  await new Promise<void>((resolve) => created.listen(0, '127.0.0.1', resolve));
  return {
    port: (created.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        created.closeAllConnections();
        created.close(() => resolve());
      }),
  };
}
