import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { MirrorDatabase } from '../../src/db/open.js';
import { silentLogger } from '../../src/logger.js';
import type { MediaConfig } from '../../src/config/load-config.js';
import {
  startSimulatedMediaHost,
  startSimulatedUpstream,
  type SimulatedMediaHost,
  type SimulatedUpstream,
  type SimulatedUpstreamOptions,
} from '../../src/simulated-upstream/index.js';
import { runSync, type SyncSummary } from '../../src/sync/run-sync.js';
import { syncConfig, type TestEnv } from '../helpers/config.js';
import { tempDatabase } from '../helpers/temp-db.js';

export interface MediaRig {
  store: MirrorDatabase;
  upstream: SimulatedUpstream;
  host: SimulatedMediaHost;
  media: MediaConfig;
  /** One run with the rig's media settings and the variables in `env`. */
  sync(env?: TestEnv): Promise<SyncSummary>;
}

/** Closes once, whether the test stops it first or the test's end does. */
function closeOnce<T extends { close(): Promise<void> }>(server: T): T {
  let closing: Promise<void> | null = null;
  const close = server.close.bind(server);
  const once = (): Promise<void> => (closing ??= close());
  onTestFinished(once);
  return Object.assign(server, { close: once });
}

export async function mediaHost(): Promise<SimulatedMediaHost> {
  return closeOnce(await startSimulatedMediaHost());
}

/** A simulated upstream whose media live on a simulated media host, a fresh db, media settings. */
export async function mediaRig(
  options: SimulatedUpstreamOptions | ((host: SimulatedMediaHost) => SimulatedUpstreamOptions) = {},
): Promise<MediaRig> {
  const host = await mediaHost();
  const chosen = typeof options === 'function' ? options(host) : options;
  const upstream = closeOnce(
    await startSimulatedUpstream({
      seed: 7,
      count: 12,
      mediaBaseUrl: host.mediaBaseUrl,
      ...chosen,
    }),
  );
  const store = tempDatabase();
  const mediaEnv: TestEnv = {
    MEDIA_ORIGINS: host.url,
    MEDIA_DIR: join(store.file, '..', 'media'),
    MEDIA_MAX_BYTES: String(10 * 1024 * 1024),
    MEDIA_RUN_MAX_BYTES: String(100 * 1024 * 1024),
    MEDIA_TIMEOUT: '5s',
  };
  return {
    store,
    upstream,
    host,
    media: syncConfig(upstream.url, mediaEnv).media,
    sync: (env = {}) =>
      runSync(syncConfig(upstream.url, { ...mediaEnv, ...env }), { store, logger: silentLogger() }),
  };
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

export function objectPath(dir: string, sha: string): string {
  return join(dir, 'objects', sha.slice(0, 2), sha);
}

/** Every committed blob row has its complete file: present and hashing to its name. */
export function expectedMissingOrPartial(store: MirrorDatabase, dir: string): string[] {
  const shas = store.sqlite
    .prepare('select sha256 from media_blobs where dropped_at is null')
    .pluck()
    .all() as string[];
  return shas.filter((sha) => {
    const path = objectPath(dir, sha);
    return !existsSync(path) || sha256(readFileSync(path)) !== sha;
  });
}

/** Distinct media URLs of the upstream's listing on the host. */
export function listedMediaUrls(upstream: SimulatedUpstream, host: SimulatedMediaHost): string[] {
  const urls = new Set<string>();
  for (const entry of upstream.data.entries()) {
    const e = entry as { emoji_file?: unknown; emoji_file_webm?: unknown; images?: unknown };
    for (const v of [
      e.emoji_file,
      e.emoji_file_webm,
      ...(Array.isArray(e.images) ? (e.images as unknown[]) : []),
    ]) {
      if (typeof v === 'string' && v.startsWith(host.url)) urls.add(v);
    }
  }
  return [...urls].sort();
}

/** Files left in the temp folder (none when it was never created). */
export function tempLeftovers(dir: string): string[] {
  const tmp = join(dir, 'tmp');
  return existsSync(tmp) ? readdirSync(tmp) : [];
}

/** A rig of `count` coworkers synced twice, new bytes behind one PNG's URL in between: one media_changed. */
export async function rigWithMediaChange(count: number): Promise<MediaRig> {
  const rig = await mediaRig({ count });
  await rig.sync();
  const bumped = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png')) ?? '';
  rig.host.bump(bumped);
  await rig.sync();
  return rig;
}
