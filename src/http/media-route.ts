import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import type { MirrorDatabase } from '../db/open.js';
import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';

/** `/media/<sha256>/<original file name>`: the name is for people and downloads; the hash decides. */
const MEDIA_PATH = /^\/media\/([0-9a-f]{64})\/[^/]+$/;

const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface MediaRouteDeps {
  store: MirrorDatabase;
  /** The media folder (MEDIA_DIR or `media/` beside the database). */
  dir: string;
  metrics: Metrics;
  logger: Logger;
}

/** A single byte range, resolved against the size: inclusive ends. */
export type RangeAnswer = { start: number; end: number } | 'unsatisfiable' | null;

/**
 * RFC 9110 §14: one `bytes=` range, resolved against `size`. Null means "serve the whole file": no
 * header, another unit, a malformed one, or several ranges (a server may ignore a Range header,
 * and a multipart answer buys a browser nothing).
 */
export function resolveRange(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return null;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/** If-None-Match: weak comparison, `*` matches any stored file. */
function matchesNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || (t.startsWith('W/') ? t.slice(2) : t) === etag;
  });
}

/**
 * Serves mirrored files from node:http, streamed from disk (never read whole per request), with a
 * strong ETag (the hash), immutable caching, nosniff, 304s and single ranges as `<video>` needs.
 * Returns false when the path is not a stored file, so the caller answers it as before (Django's
 * 404): without mirrored media the server behaves exactly as it did.
 */
export function createMediaHandler(
  deps: MediaRouteDeps,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const lookup = deps.store.sqlite.prepare(
    'select size, content_type as contentType from media_blobs where sha256 = ? and dropped_at is null',
  );
  // prom-client hashes label sets on every call; bound children keep a request's bookkeeping cheap.
  const counters = new Map<string, { inc(): void }>();
  const timer = deps.metrics.latency.labels('media');
  const record = (method: string, status: number, started: number): void => {
    const key = `${method} ${status}`;
    let counter = counters.get(key);
    if (!counter && counters.size < 64)
      counters.set(key, (counter = deps.metrics.requests.labels('media', method, String(status))));
    (counter ?? deps.metrics.requests.labels('media', method, String(status))).inc();
    timer.observe((performance.now() - started) / 1000);
  };
  // Objects never change once written and leave only when their row is dropped (checked per
  // request), so a file seen once need not be stat'ed again.
  const present = new Set<string>();
  return (req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith('/media/')) return false;
    const match = MEDIA_PATH.exec(url.split('?', 1)[0] ?? '');
    const sha256 = match?.[1];
    if (sha256 === undefined) return false;
    const blob = lookup.get(sha256) as { size: number; contentType: string } | undefined;
    if (!blob) return false;
    const path = join(deps.dir, 'objects', sha256.slice(0, 2), sha256);
    const size = blob.size;
    if (!present.has(sha256)) {
      try {
        statSync(path);
      } catch (err) {
        deps.logger.error({ err, sha256 }, 'a committed media file is missing; answering 404');
        return false;
      }
      if (present.size >= 100_000) present.clear();
      present.add(sha256);
    }
    const started = performance.now();
    const method = req.method ?? 'GET';
    const etag = `"${sha256}"`;
    const common: [string, string][] = [
      ['ETag', etag],
      ['Cache-Control', IMMUTABLE],
      ['X-Content-Type-Options', 'nosniff'],
      ['Accept-Ranges', 'bytes'],
    ];
    if (method !== 'GET' && method !== 'HEAD') {
      res
        .writeHead(405, [
          ['Allow', 'GET, HEAD'],
          ['Content-Length', '0'],
        ])
        .end();
      record(method, 405, started);
      return true;
    }
    if (matchesNoneMatch(req.headers['if-none-match'], etag)) {
      res.writeHead(304, common.flat()).end();
      record(method, 304, started);
      return true;
    }
    // If-Range: the range applies only to the representation named (strong comparison; this file
    // has no Last-Modified, so a date never matches and the whole file is sent).
    const ifRange = [req.headers['if-range'] ?? []].flat()[0];
    const range =
      ifRange === undefined || ifRange.trim() === etag ? resolveRange(req.headers.range, size) : null;
    if (range === 'unsatisfiable') {
      res
        .writeHead(416, [...common, ['Content-Range', `bytes */${size}`], ['Content-Length', '0']].flat())
        .end();
      record(method, 416, started);
      return true;
    }
    const status = range ? 206 : 200;
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    const headers: [string, string][] = [
      ...common,
      ['Content-Type', blob.contentType],
      ['Content-Length', String(size === 0 ? 0 : end - start + 1)],
    ];
    if (range) headers.push(['Content-Range', `bytes ${start}-${end}/${size}`]);
    res.writeHead(status, headers.flat());
    record(method, status, started);
    if (method === 'HEAD' || size === 0) {
      res.end();
      return true;
    }
    pipeline(createReadStream(path, { start, end, highWaterMark: 256 * 1024 }), res, (err) => {
      // A client that hangs up mid-file is routine for video; anything else is worth a line.
      if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        deps.logger.warn({ err, sha256 }, 'media stream failed');
      }
    });
    return true;
  };
}
