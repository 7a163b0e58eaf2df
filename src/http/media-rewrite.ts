import type { IncomingHttpHeaders } from 'node:http';
import type { Store } from '../db/store.js';
import { MEDIA_FIELDS, mirrorMediaPath } from '../media/media-refs.js';
import { prepareSnapshot, type PreparedSnapshot } from '../drf/snapshot.js';
import { isJsonObject, type JsonValue } from '../drf/python-json.js';
import { parseJson } from '../json/lossless.js';
import { stringifyJson } from '../json/safe-json.js';

/** Upstream media URL → the mirror's path for it (`/media/<sha256>/<name>`). */
export type MediaUrlMap = ReadonlyMap<string, string>;

/**
 * Pure: an entry with every media URL the map knows replaced by `base` + its mirror path. A URL the
 * mirror never got keeps its upstream value; every other field and the key order stay as they were.
 */
function rewriteEntry(entry: JsonValue, map: MediaUrlMap, base: string): JsonValue {
  if (!isJsonObject(entry)) return entry;
  const swap = (value: JsonValue | undefined): JsonValue | undefined => {
    if (typeof value === 'string') {
      const path = map.get(value);
      return path === undefined ? value : base + path;
    }
    return Array.isArray(value) ? value.map((v) => swap(v) ?? v) : value;
  };
  const out: Record<string, JsonValue> = { ...entry };
  for (const field of MEDIA_FIELDS) {
    if (field in out) out[field] = swap(out[field]) ?? null;
  }
  return out;
}

/** The stored body (compact JSON text) with its media URLs rewritten: `rewriteEntry` on text. */
export function rewriteEntryText(body: string, map: MediaUrlMap, base: string): string {
  return stringifyJson(rewriteEntry(parseJson(body) as JsonValue, map, base));
}

/** The media URLs mirrored as of run `runId`: the versions valid then, whose file is still kept. */
export async function mediaUrlMapAt(store: Store, runId: number): Promise<Map<string, string>> {
  return new Map(
    (await store.mediaShasAt(runId)).map(([url, sha256]) => [url, mirrorMediaPath(sha256, url)]),
  );
}

export interface MediaBaseOptions {
  publicBaseUrl: string | null;
  trustProxy: boolean;
}

/** scheme://host of the mirror as the client addressed it, built as next/previous are. */
function mediaBase(headers: IncomingHttpHeaders, options: MediaBaseOptions): string {
  if (options.publicBaseUrl !== null) return options.publicBaseUrl.replace(/\/+$/, '');
  const first = (value: string | string[] | undefined): string | undefined =>
    Array.isArray(value) ? value.join(', ') : value;
  const proto = options.trustProxy ? first(headers['x-forwarded-proto']) : undefined;
  const host = (options.trustProxy ? first(headers['x-forwarded-host']) : undefined) ?? headers.host;
  return `${proto === 'https' ? 'https' : 'http'}://${host ?? 'localhost'}`;
}

const BASES_PER_SNAPSHOT = 8;
const MAX_BASE_BYTES = 512;

/**
 * MEDIA_REWRITE: the snapshot a request is answered from, with the mirror's media URLs for the base
 * the request names. Variants are prepared once per (snapshot, base) and kept with the snapshot;
 * a few bases per snapshot at most, since the Host header is the client's to choose.
 */
export function createMediaRewriter(store: Store, options: MediaBaseOptions): MediaRewriter {
  const maps = new WeakMap<PreparedSnapshot, MediaUrlMap>();
  const variants = new WeakMap<PreparedSnapshot, Map<string, PreparedSnapshot>>();
  const rewrite = (snapshot: PreparedSnapshot, headers: IncomingHttpHeaders): PreparedSnapshot => {
    const map = maps.get(snapshot);
    if (!map) throw new Error('media map not loaded: call load(snapshot) first');
    if (map.size === 0) return snapshot;
    const base = mediaBase(headers, options);
    let byBase = variants.get(snapshot);
    const cached = byBase?.get(base);
    if (cached) return cached;
    const variant = rewriteSnapshot(snapshot, map, base);
    if (Buffer.byteLength(base) <= MAX_BASE_BYTES) {
      if (!byBase) variants.set(snapshot, (byBase = new Map<string, PreparedSnapshot>()));
      if (byBase.size >= BASES_PER_SNAPSHOT) byBase.delete(byBase.keys().next().value as string);
      byBase.set(base, variant);
    }
    return variant;
  };
  return {
    rewrite,
    isLoaded: (snapshot) => maps.has(snapshot),
    load: async (snapshot) => {
      if (maps.has(snapshot)) return;
      const map = await mediaUrlMapAt(store, Number(snapshot.id));
      maps.set(snapshot, map);
    },
  };
}

/**
 * MEDIA_REWRITE's rewriter. A snapshot's URL map is read from the store once (`load`, async);
 * `rewrite` is then synchronous, as the list endpoint's hot path needs.
 */
export interface MediaRewriter {
  rewrite(snapshot: PreparedSnapshot, headers: IncomingHttpHeaders): PreparedSnapshot;
  isLoaded(snapshot: PreparedSnapshot): boolean;
  load(snapshot: PreparedSnapshot): Promise<void>;
}

/** The snapshot with rewritten entries; its id names the base, so ETags differ from the plain one. */
function rewriteSnapshot(snapshot: PreparedSnapshot, map: MediaUrlMap, base: string): PreparedSnapshot {
  const rewritten = prepareSnapshot({
    id: `${snapshot.id}+media@${base}`,
    entries: snapshot.entryValues.map((entry) => stringifyJson(rewriteEntry(entry, map, base))),
    pageSize: snapshot.pageSize,
    optionsBody: null,
    fetchedAt: new Date(snapshot.fetchedAtIso),
  });
  return { ...rewritten, options: snapshot.options, lastModified: snapshot.lastModified };
}
