import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { onTestFinished } from 'vitest';

/** A request as a receiver saw it, with both signature verdicts. */
export interface Received {
  n: number;
  path: string;
  id: string;
  timestamp: string;
  signature: string | undefined;
  body: string;
  /** The specification's algorithm, written here from its text with node:crypto. */
  verifiedBySpec: boolean;
  /** The specification's reference library (`standardwebhooks`). */
  verifiedByLibrary: boolean;
}

/** How the receiver answers request number n (1-based). */
export type Behaviour =
  | {
      kind: 'status';
      status: number;
      body?: string;
      headers?: Record<string, string>;
      /** Handled (acknowledged), then the connection drops before the answer is sent. */
      drop?: boolean;
    }
  /** Never answers (until the client gives up or the test ends). */
  | { kind: 'hang' }
  /** Headers at once, then one byte of body every `everyMs`, forever. */
  | { kind: 'slow-body'; status: number; everyMs: number };

/**
 * Standard Webhooks verification as its text says: key = base64 of the secret after `whsec_`;
 * expected = base64(HMAC-SHA256(key, "id.timestamp.body")); the header holds space-separated
 * `v1,<sig>` entries, one of which must match.
 */
export function verifyBySpec(
  secret: string,
  id: string,
  timestamp: string,
  body: string,
  header: string,
): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return header.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Requests by webhook-id that were answered 2xx (what a deduplicating receiver would act on). */
  acknowledged: string[];
  /** How each request is answered; a promise holds the answer until it settles. */
  behave: (fn: (n: number, request: Received) => Behaviour | Promise<Behaviour>) => void;
  /** Resolves once `count` requests have arrived. */
  waitForRequests: (count: number) => Promise<void>;
  close: () => Promise<void>;
}

/** A real receiver on 127.0.0.1:0, closed (its hanging sockets destroyed) when the test ends. */
export async function webhookReceiver(secret: string | null): Promise<Receiver> {
  const received: Received[] = [];
  const acknowledged: string[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let behaviour: (n: number, request: Received) => Behaviour | Promise<Behaviour> = () => ({
    kind: 'status',
    status: 204,
  });
  let waiters: { count: number; resolve: () => void }[] = [];
  const library = secret ? new Webhook(secret) : null;

  const onRequest = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const id = header('webhook-id') ?? '';
    const timestamp = header('webhook-timestamp') ?? '';
    const signature = header('webhook-signature');
    let verifiedByLibrary = false;
    try {
      library?.verify(body, {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature ?? '',
      });
      verifiedByLibrary = library !== null;
    } catch {
      verifiedByLibrary = false;
    }
    const request: Received = {
      n: received.length + 1,
      path: req.url ?? '/',
      id,
      timestamp,
      signature,
      body,
      verifiedBySpec:
        secret !== null && signature !== undefined && verifyBySpec(secret, id, timestamp, body, signature),
      verifiedByLibrary,
    };
    received.push(request);
    waiters = waiters.filter((w) => (received.length >= w.count ? (w.resolve(), false) : true));
    void Promise.resolve(behaviour(request.n, request)).then((answer) => respond(req, res, id, answer));
  };

  const respond = (req: IncomingMessage, res: ServerResponse, id: string, answer: Behaviour) => {
    if (answer.kind === 'hang') return;
    if (answer.kind === 'slow-body') {
      res.writeHead(answer.status, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), answer.everyMs);
      timers.add(timer);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (answer.status >= 200 && answer.status < 300) acknowledged.push(id);
    if (answer.drop) {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
    res.end(answer.body ?? '');
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => onRequest(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const timer of timers) clearInterval(timer);
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  onTestFinished(close);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    acknowledged,
    behave: (fn) => (behaviour = fn),
    waitForRequests: (count) =>
      received.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close,
  };
}

/** A fresh Standard Webhooks secret: whsec_ + base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256)).toString('base64')}`;
}
