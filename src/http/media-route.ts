import { closeSync, createReadStream, openSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pipeline, Readable } from 'node:stream';
import type { ByteSpan, Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import { BlobCache } from '../media/blob-cache.js';
import type { FolderPlace } from '../media/claim-folder.js';
import type { Metrics } from './metrics.js';

/** `/media/<sha256>/<original file name>`: the name is for people and downloads; the hash decides. */
const MEDIA_PATH = /^\/media\/([0-9a-f]{64})\/[^/]+$/;

const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface MediaRouteDeps {
  store: Store;
  /**
   * The media folder (MEDIA_DIR or the database's own): the files themselves on SQLite, a cache
   * filled from the database on PostgreSQL (claimed for the database before its first copy).
   */
  folder: FolderPlace;
  metrics: Metrics;
  logger: Logger;
  /** Told of every committed file that cannot be served, and of every one that can (readiness). */
  audit?: { lost(sha256: string): void; found(sha256: string): void };
}

/** A single byte range, resolved against the size: inclusive ends. */
type ByteRange = { start: number; end: number };
export type RangeAnswer = ByteRange | 'unsatisfiable' | null;

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
 * Returns false when the path cannot name a stored file; when it could but names none (the store
 * says so, asynchronously), `notOurs` answers it as before (Django's 404): without mirrored media
 * the server behaves exactly as it did.
 */
export function createMediaHandler(
  deps: MediaRouteDeps,
): (req: IncomingMessage, res: ServerResponse, notOurs: () => void) => boolean {
  const findStoredFile = storedFileFinder(deps);
  const record = mediaRecorder(deps.metrics);
  return (req, res, notOurs) => {
    const started = performance.now();
    const sha256 = mediaShaOf(req.url ?? '/');
    if (sha256 === null) return false;
    findStoredFile(sha256).then(
      (file) => (file ? answerFile(req, res, file, started) : notOurs()),
      (err: unknown) => {
        // The store cannot say (PostgreSQL away): a fault of this server, as a lost file is.
        deps.logger.error({ err, sha256 }, 'media lookup failed; answering 503');
        answerFile(req, res, 'missing', started);
      },
    );
    return true;
  };

  function answerFile(
    req: IncomingMessage,
    res: ServerResponse,
    file: StoredFile | 'missing',
    started: number,
  ): void {
    if (file === 'missing') {
      // The mirror recorded the file and lost it: a fault of this server, not a resource that
      // never existed; caches must not remember it as gone.
      const body = 'Media file unavailable: the media folder is missing or unreadable.\n';
      res
        .writeHead(
          503,
          [
            ['Content-Type', 'text/plain; charset=utf-8'],
            ['Content-Length', String(Buffer.byteLength(body))],
            ['Cache-Control', 'no-store'],
            ['Retry-After', '60'],
          ].flat(),
        )
        .end(req.method === 'HEAD' ? undefined : body);
      record(req.method ?? 'GET', 503, started);
      return;
    }
    try {
      answerStoredFile(req, res, file, { record, logger: deps.logger });
    } catch (err) {
      file.release();
      throw err;
    }
  }
}

/** The sha256 a `/media/<sha256>/<name>` path names, or null for any other path. */
function mediaShaOf(url: string): string | null {
  if (!url.startsWith('/media/')) return null;
  return MEDIA_PATH.exec(url.split('?', 1)[0] ?? '')?.[1] ?? null;
}

/** A committed media object, opened: whoever answers reads it or releases it. */
interface StoredFile {
  sha256: string;
  size: number;
  contentType: string;
  /** The bytes of `span`, streamed; the stream owns what was opened. */
  read(span: ByteSpan): Readable;
  /** Frees what was opened, when no body is sent. */
  release(): void;
}

function fileOnDisk(sha256: string, fd: number, blob: { size: number; contentType: string }): StoredFile {
  return {
    sha256,
    ...blob,
    read: ({ start, end }) => createReadStream('', { fd, start, end, highWaterMark: 256 * 1024 }),
    release: () => closeSync(fd),
  };
}

/** A file this instance's folder lacks, streamed from the database (a connection only once read). */
function fileInStore(store: Store, sha256: string, blob: { size: number; contentType: string }): StoredFile {
  return {
    sha256,
    ...blob,
    read: (span) =>
      Readable.from(
        (async function* () {
          const stream = await store.openBlob(sha256, span);
          if (stream === null) throw new Error(`the database holds no bytes for ${sha256}`);
          yield* stream as AsyncIterable<Buffer>;
        })(),
        { objectMode: false },
      ),
    release: () => undefined,
  };
}

type RecordRequest = (method: string, status: number, started: number) => void;

/**
 * Resolves a file's hash to a committed file opened for reading, `missing` when its row says it is
 * stored but the file cannot be opened (the media folder moved or deleted under the server), or
 * null for "not ours: answer as before". Opened on every request, never remembered as present: an
 * open is as cheap as the stat it replaces, and a file seen once may be gone the next time.
 */
function storedFileFinder(deps: MediaRouteDeps): (sha256: string) => Promise<StoredFile | 'missing' | null> {
  // One line per outage, not one per request: reset once a file opens again.
  let reported = false;
  const { dir } = deps.folder;
  const cache = deps.store.holdsBlobs ? new BlobCache(deps.folder, deps.store, deps.logger) : null;
  return async (sha256) => {
    const blob = await deps.store.keptBlob(sha256);
    if (!blob) return null;
    const path = join(dir, 'objects', sha256.slice(0, 2), sha256);
    try {
      const fd = openSync(path, 'r');
      reported = false;
      deps.audit?.found(sha256);
      return fileOnDisk(sha256, fd, blob);
    } catch (err) {
      // Not here yet (a new instance, or another one mirrored it): the database has it, unless its
      // bytes were never copied there (mirrored before media_blob_chunks existed): then a lost file.
      if (cache !== null && (await heldInStore(deps.store, sha256))) {
        void cache.fill(sha256, blob.size);
        deps.audit?.found(sha256);
        return fileInStore(deps.store, sha256, blob);
      }
      if (!reported) {
        deps.logger.error({ err, sha256, dir }, 'a committed media file cannot be opened; answering 503');
      }
      reported = true;
      deps.audit?.lost(sha256);
      return 'missing';
    }
  };
}

/** Whether the store holds the bytes of `sha256`: asked before a status line promises them. */
async function heldInStore(store: Store, sha256: string): Promise<boolean> {
  const none = await store.openBlob(sha256, { start: 0, end: -1 });
  none?.destroy();
  return none !== null;
}

function mediaRecorder(metrics: Metrics): RecordRequest {
  // prom-client hashes label sets on every call; bound children keep a request's bookkeeping cheap.
  const counters = new Map<string, { inc(): void }>();
  const timer = metrics.latency.labels('media');
  return (method, status, started) => {
    const key = `${method} ${status}`;
    let counter = counters.get(key);
    if (!counter && counters.size < 64)
      counters.set(key, (counter = metrics.requests.labels('media', method, String(status))));
    (counter ?? metrics.requests.labels('media', method, String(status))).inc();
    timer.observe((performance.now() - started) / 1000);
  };
}

/** Answers a request for a stored file: 405, 304, 416, or the file (whole or one range). */
function answerStoredFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: StoredFile,
  { record, logger }: { record: RecordRequest; logger: Logger },
): void {
  const started = performance.now();
  const method = req.method ?? 'GET';
  const { size } = file;
  const etag = `"${file.sha256}"`;
  const common: [string, string][] = [
    ['ETag', etag],
    ['Cache-Control', IMMUTABLE],
    ['X-Content-Type-Options', 'nosniff'],
    ['Accept-Ranges', 'bytes'],
  ];
  if (method !== 'GET' && method !== 'HEAD') {
    file.release();
    res
      .writeHead(405, [
        ['Allow', 'GET, HEAD'],
        ['Content-Length', '0'],
      ])
      .end();
    record(method, 405, started);
    return;
  }
  if (matchesNoneMatch(req.headers['if-none-match'], etag)) {
    file.release();
    res.writeHead(304, common.flat()).end();
    record(method, 304, started);
    return;
  }
  // If-Range: the range applies only to the representation named (strong comparison; this file
  // has no Last-Modified, so a date never matches and the whole file is sent).
  const ifRange = [req.headers['if-range'] ?? []].flat()[0];
  const range =
    ifRange === undefined || ifRange.trim() === etag ? resolveRange(req.headers.range, size) : null;
  if (range === 'unsatisfiable') {
    file.release();
    res
      .writeHead(416, [...common, ['Content-Range', `bytes */${size}`], ['Content-Length', '0']].flat())
      .end();
    record(method, 416, started);
    return;
  }
  const status = sendStoredBytes(res, file, { method, range, common, logger });
  record(method, status, started);
}

/** Writes a 200 (the whole file) or 206 (one range), streaming the body unless HEAD; returns the status. */
function sendStoredBytes(
  res: ServerResponse,
  file: StoredFile,
  {
    method,
    range,
    common,
    logger,
  }: {
    method: string;
    range: ByteRange | null;
    common: [string, string][];
    logger: Logger;
  },
): number {
  const { size } = file;
  const status = range ? 206 : 200;
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  const headers: [string, string][] = [
    ...common,
    ['Content-Type', file.contentType],
    ['Content-Length', String(size === 0 ? 0 : end - start + 1)],
  ];
  if (range) headers.push(['Content-Range', `bytes ${start}-${end}/${size}`]);
  res.writeHead(status, headers.flat());
  if (method === 'HEAD' || size === 0) {
    file.release();
    res.end();
    return status;
  }
  const stream = file.read({ start, end });
  pipeline(stream, res, (err) => {
    // A client that hangs up mid-file is routine for video; anything else is worth a line.
    if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') {
      logger.warn({ err, sha256: file.sha256 }, 'media stream failed');
    }
  });
  return status;
}
