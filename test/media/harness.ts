import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { SqliteStore } from '../../src/db/sqlite/store.js';
import type { Store } from '../../src/db/store.js';
import { silentLogger, type Logger } from '../../src/logger.js';
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
import { storeRows } from '../helpers/postgres.js';
import { tempDatabase, tempDir } from '../helpers/temp-db.js';

/** A store a media test runs on: a SQLite file, or a PostgreSQL database `storeMaker` made. */
export type RigStore = Store & { file: string };

export interface MediaRig {
  store: RigStore;
  upstream: SimulatedUpstream;
  host: SimulatedMediaHost;
  media: MediaConfig;
  /** One run with the rig's media settings and the variables in `env`, logging to `logger` (none by default). */
  sync(env?: TestEnv, logger?: Logger): Promise<SyncSummary>;
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

/**
 * A simulated upstream whose media live on a simulated media host, a store (a fresh SQLite file
 * unless one is given), media settings. The media folder is beside a SQLite file; on PostgreSQL,
 * whose `file` is a URL, it is a temp folder (there it is a cache of the bytes the database holds).
 */
export async function mediaRig(
  options: SimulatedUpstreamOptions | ((host: SimulatedMediaHost) => SimulatedUpstreamOptions) = {},
  given?: RigStore,
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
  const store = given ?? tempDatabase();
  const mediaEnv: TestEnv = {
    MEDIA_ORIGINS: host.url,
    MEDIA_DIR: store instanceof SqliteStore ? join(store.file, '..', 'media') : join(tempDir(), 'media'),
    MEDIA_MAX_BYTES: String(10 * 1024 * 1024),
    MEDIA_RUN_MAX_BYTES: String(100 * 1024 * 1024),
    MEDIA_TIMEOUT: '5s',
  };
  return {
    store,
    upstream,
    host,
    media: syncConfig(upstream.url, mediaEnv).media,
    sync: (env = {}, logger = silentLogger()) =>
      runSync(syncConfig(upstream.url, { ...mediaEnv, ...env }), { store, logger }),
  };
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

export function objectPath(dir: string, sha: string): string {
  return join(dir, 'objects', sha.slice(0, 2), sha);
}

async function heldBytes(store: Store, sha: string, size: number): Promise<Buffer | null> {
  const stream = await store.openBlob(sha, { start: 0, end: size - 1 });
  if (stream === null) return null;
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/**
 * The committed blob rows whose bytes are missing, partial or other bytes: the file in the folder
 * on SQLite, the database's bytes on PostgreSQL (its folder is a cache and may lack any file).
 */
export async function expectedMissingOrPartial(store: RigStore, dir: string): Promise<string[]> {
  const held = (await storeRows(
    store,
    'select sha256, size from media_blobs where dropped_at is null order by sha256',
  )) as { sha256: string; size: number }[];
  const bad: string[] = [];
  for (const { sha256: sha, size } of held) {
    if (store.holdsBlobs) {
      const bytes = await heldBytes(store, sha, Number(size));
      if (bytes === null || sha256(bytes) !== sha) bad.push(sha);
      continue;
    }
    const path = objectPath(dir, sha);
    if (!existsSync(path) || sha256(readFileSync(path)) !== sha) bad.push(sha);
  }
  return bad;
}

/**
 * Every row of a table on either store (`tableRows` for any store), ordered by the columns named in
 * turn (by the first for `*`): rows tied on the first would come in each database's own order.
 */
export function rowsOf(store: RigStore, table: string, columns = '*'): Promise<Record<string, unknown>[]> {
  const named = columns === '*' ? 1 : columns.split(',').length;
  const order = Array.from({ length: named }, (_, i) => i + 1).join(', ');
  return storeRows(store, `select ${columns} from ${table} order by ${order}`);
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

/** The bytes behind every media URL of a listing, read from the host while it is up. */
export function hostFiles(upstream: SimulatedUpstream, host: SimulatedMediaHost): Map<string, Buffer> {
  return new Map(listedMediaUrls(upstream, host).map((u) => [u, host.fileAt(u)?.bytes ?? Buffer.alloc(0)]));
}

/** Every name under a media folder's `objects/` (none when it was never created), sorted. */
export function objectsIn(dir: string): string[] {
  const objects = join(dir, 'objects');
  if (!existsSync(objects)) return [];
  return readdirSync(objects)
    .flatMap((prefix) => readdirSync(join(objects, prefix)))
    .sort();
}

/** Files left in the temp folder (none when it was never created). */
export function tempLeftovers(dir: string): string[] {
  const tmp = join(dir, 'tmp');
  return existsSync(tmp) ? readdirSync(tmp) : [];
}

/** A rig of `count` coworkers synced twice, new bytes behind one PNG's URL in between: one media_changed. */
export async function rigWithMediaChange(count: number, store?: RigStore): Promise<MediaRig> {
  const rig = await mediaRig({ count }, store);
  await rig.sync();
  const bumped = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png')) ?? '';
  rig.host.bump(bumped);
  await rig.sync();
  return rig;
}
