import { prepareSnapshot } from '../../../src/drf/snapshot.js';
import { startListServer } from './list-server.js';
import { startReferenceServer } from './reference-server.js';

/** The two servers a differential test compares, holding the same listing. */
export interface ServerPair {
  /** The real DRF site (test/drf-reference/server.py under gunicorn). */
  referencePort: number;
  /** The mirror's list endpoint as `buildServer` mounts it. */
  mirrorPort: number;
  close(): Promise<void>;
}

/**
 * Starts the reference DRF site and the mirror's list endpoint over the same entries (their JSON
 * texts), page size, OPTIONS body and proxy trust, so every differential test sets them up alike.
 */
export async function startServerPair(
  python: string,
  listing: {
    id: string;
    entries: readonly string[];
    pageSize?: number;
    optionsBody: string | null;
    trustProxy?: boolean;
  },
): Promise<ServerPair> {
  const pageSize = listing.pageSize ?? 8;
  const trustProxy = listing.trustProxy ?? false;
  const reference = await startReferenceServer(python, { texts: listing.entries }, pageSize, trustProxy);
  try {
    const snapshot = prepareSnapshot({
      id: listing.id,
      entries: listing.entries,
      pageSize,
      optionsBody: listing.optionsBody,
      fetchedAt: new Date('2026-11-21T12:00:00Z'),
    });
    const mirror = await startListServer(snapshot, {
      trustProxyHeaders: trustProxy,
      publicBaseUrl: null,
      cacheControl: null,
    });
    return {
      referencePort: reference.port,
      mirrorPort: mirror.port,
      close: async () => {
        await mirror.close();
        await reference.stop();
      },
    };
  } catch (error) {
    await reference.stop();
    throw error;
  }
}
