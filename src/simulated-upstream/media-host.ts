import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mediaFileFor, type MediaFile } from './media-bytes.js';

export interface SimulatedMediaHostOptions {
  host?: string;
  port?: number;
  /** Delay before each answer, as a remote host's round trip. */
  latencyMs?: number;
}

export interface MediaHostRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** A media host on a real loopback port: `GET/HEAD /media/<path>` with ETag and Last-Modified. */
export interface SimulatedMediaHost {
  /** Origin, e.g. http://127.0.0.1:40124. */
  readonly url: string;
  /** What the listing's media URLs start with: `${url}/media/`. */
  readonly mediaBaseUrl: string;
  readonly requests: readonly MediaHostRequest[];
  /** Body bytes sent so far (200 answers to GET). */
  readonly bytesSent: number;
  /** The bytes served now at a URL or path, or null when it answers 404. */
  fileAt(urlOrPath: string): MediaFile | null;
  /** New bytes at the same URL (formats with one fixed file keep theirs). */
  bump(urlOrPath: string): void;
  /** Answers `status` for this URL or path (`*`: every one) until cleared with null. */
  fail(urlOrPath: string, status: number | null): void;
  /** Serves these bytes and Content-Type at this URL or path instead of the generated ones (null clears). */
  override(urlOrPath: string, file: MediaFile | null): void;
  /** Redirects this URL or path to `location` (null clears). */
  redirect(urlOrPath: string, location: string | null): void;
  setLatency(ms: number): void;
  close(): Promise<void>;
}

const EPOCH = Date.parse('2026-01-01T00:00:00Z');

const etagOf = (bytes: Buffer): string => `"${createHash('sha1').update(bytes).digest('base64url')}"`;

export async function startSimulatedMediaHost(
  options: SimulatedMediaHostOptions = {},
): Promise<SimulatedMediaHost> {
  const revisions = new Map<string, number>();
  const failures = new Map<string, number>();
  const redirects = new Map<string, string>();
  const overrides = new Map<string, MediaFile>();
  const requests: MediaHostRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let latencyMs = options.latencyMs ?? 0;
  let bytesSent = 0;
  const pathOf = (urlOrPath: string): string =>
    urlOrPath === '*' ? '*' : URL.canParse(urlOrPath) ? new URL(urlOrPath).pathname : urlOrPath;
  // Generated once per path and revision: a remote host's cost is its latency, not our CPU.
  const generated = new Map<string, { file: MediaFile | null; etag: string }>();
  const entryAt = (path: string): { file: MediaFile | null; etag: string } => {
    const override = overrides.get(path);
    if (override) return { file: override, etag: etagOf(override.bytes) };
    const key = `${revisions.get(path) ?? 0} ${path}`;
    let entry = generated.get(key);
    if (!entry) {
      const file = path.startsWith('/media/') ? mediaFileFor(path, revisions.get(path) ?? 0) : null;
      entry = { file, etag: file ? etagOf(file.bytes) : '' };
      if (generated.size < 10_000) generated.set(key, entry);
    }
    return entry;
  };
  const fileAt = (path: string): MediaFile | null => entryAt(path).file;

  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers } });
    res.on('error', () => undefined);
    const answer = (): void => {
      const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
      const status = failures.get(path) ?? failures.get('*');
      if (status !== undefined) {
        res.writeHead(status, { 'Content-Type': 'text/html' }).end(`<h1>${status}</h1>`);
        return;
      }
      const location = redirects.get(path);
      if (location !== undefined) {
        res.writeHead(302, { Location: location }).end();
        return;
      }
      const { file, etag } = entryAt(path);
      if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'Content-Type': 'text/html' }).end('<h1>Not Found</h1>');
        return;
      }
      const lastModified = new Date(EPOCH + (revisions.get(path) ?? 0) * 60_000).toUTCString();
      const since = req.headers['if-modified-since'];
      const fresh =
        req.headers['if-none-match'] !== undefined
          ? req.headers['if-none-match'] === etag
          : since !== undefined && Date.parse(since) >= Date.parse(lastModified);
      const headers = { ETag: etag, 'Last-Modified': lastModified, 'Cache-Control': 'max-age=3600' };
      if (fresh) {
        res.writeHead(304, headers).end();
        return;
      }
      res.writeHead(200, {
        ...headers,
        'Content-Type': file.contentType,
        'Content-Length': file.bytes.length,
      });
      if (req.method === 'HEAD') res.end();
      else {
        bytesSent += file.bytes.length;
        res.end(file.bytes);
      }
    };
    if (latencyMs === 0) return answer();
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer();
    }, latencyMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url,
    mediaBaseUrl: `${url}/media/`,
    requests,
    get bytesSent() {
      return bytesSent;
    },
    fileAt: (urlOrPath) => fileAt(pathOf(urlOrPath)),
    bump(urlOrPath) {
      const path = pathOf(urlOrPath);
      revisions.set(path, (revisions.get(path) ?? 0) + 1);
    },
    fail(urlOrPath, status) {
      if (status === null) failures.delete(pathOf(urlOrPath));
      else failures.set(pathOf(urlOrPath), status);
    },
    override(urlOrPath, file) {
      if (file === null) overrides.delete(pathOf(urlOrPath));
      else overrides.set(pathOf(urlOrPath), file);
    },
    redirect(urlOrPath, location) {
      if (location === null) redirects.delete(pathOf(urlOrPath));
      else redirects.set(pathOf(urlOrPath), location);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
