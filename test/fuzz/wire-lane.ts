import { connect, type Socket } from 'node:net';
import { WAIT_MS } from '../helpers/patience.js';

/** One final response read off the wire, after any 1xx interim responses. */
export interface WireResponse {
  status: number;
  headers: [string, string][];
  body: Buffer;
  /** Statuses of the interim (1xx) responses that came first. */
  interim: number[];
  /** Bytes that came after this response in the same reads: a framing error if non-zero. */
  trailing: number;
}

export type Exchange =
  { kind: 'answered'; response: WireResponse } | { kind: 'dropped'; reason: string; received: string };

function headerOf(headers: readonly [string, string][], name: string): string | undefined {
  return headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

interface Parsed {
  response: WireResponse;
}

/**
 * Parses one response from `data`; null when more bytes are needed. `closed`: the peer has closed,
 * so a body without length runs to the end.
 */
export function parseWireResponse(data: Buffer, isHead: boolean, closed: boolean): Parsed | null {
  const interim: number[] = [];
  let at = 0;
  for (;;) {
    const headEnd = data.indexOf('\r\n\r\n', at);
    if (headEnd < 0) return null;
    const [statusLine = '', ...lines] = data.subarray(at, headEnd).toString('latin1').split('\r\n');
    // gunicorn's status line repeats the request's version (`HTTP/1.2`, `HTTP/2.0`), as the mirror's does.
    const match = /^HTTP\/\d+\.\d+ (\d{3})/.exec(statusLine);
    if (!match) throw new Error(`not a status line: ${JSON.stringify(statusLine.slice(0, 80))}`);
    const status = Number(match[1]);
    const headers = lines.map((line): [string, string] => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon), line.slice(colon + 1).trim()];
    });
    const rest = data.subarray(headEnd + 4);
    if (status >= 100 && status < 200 && status !== 101) {
      interim.push(status);
      at = headEnd + 4;
      continue;
    }
    const read = readBody(rest, headers, isHead || status === 204 || status === 304, closed);
    if (read === null) return null;
    const trailing = rest.length - read.used;
    return { response: { status, headers, body: read.body, interim, trailing } };
  }
}

interface BodyRead {
  body: Buffer;
  /** Bytes of the input the body and its framing took. */
  used: number;
}

function readBody(
  rest: Buffer,
  headers: readonly [string, string][],
  noBody: boolean,
  closed: boolean,
): BodyRead | null {
  if (noBody) return { body: Buffer.alloc(0), used: 0 };
  if (headerOf(headers, 'transfer-encoding')?.toLowerCase() === 'chunked') return dechunk(rest);
  const length = headerOf(headers, 'content-length');
  if (length !== undefined) {
    const n = Number(length);
    return rest.length >= n ? { body: rest.subarray(0, n), used: n } : null;
  }
  return closed ? { body: rest, used: rest.length } : null;
}

/** The body of a complete chunked message (no trailers), or null while it is incomplete. */
function dechunk(data: Buffer): BodyRead | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) throw new Error('bad chunk size in response');
    if (size === 0) {
      const end = data.indexOf('\r\n\r\n', lineEnd);
      return end < 0 ? null : { body: Buffer.concat(parts), used: end + 4 };
    }
    if (data.length < lineEnd + 2 + size + 2) return null;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/**
 * A client connection that sends one request at a time and reads its answer, reusing the socket
 * (keep-alive) until the server says it closes, then reconnecting. No pipelining: a request the
 * parser refuses then costs only itself.
 */
export class WireLane {
  #socket: Socket | null = null;
  #alive = false;
  #connections = 0;
  #reused = false;

  constructor(
    readonly port: number,
    readonly timeoutMs = WAIT_MS,
  ) {}

  /** Whether the last exchange went over a connection an earlier exchange had used. */
  get reused(): boolean {
    return this.#reused;
  }

  /** TCP connections opened so far. */
  get connections(): number {
    return this.#connections;
  }

  /**
   * Sends `bytes` and resolves with the answer, or with `dropped` when the connection ends (or
   * the time runs out) before a whole response arrived. `reuse`: keep the socket afterwards.
   */
  async exchange(bytes: Buffer, isHead: boolean, reuse: boolean): Promise<Exchange> {
    this.#reused = this.#alive && this.#socket !== null;
    const socket = this.#alive && this.#socket ? this.#socket : await this.#connect();
    const result = await new Promise<Exchange>((resolve) => {
      let data = Buffer.alloc(0);
      let done = false;
      const finish = (exchange: Exchange): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(exchange);
      };
      const attempt = (closed: boolean): void => {
        try {
          const parsed = parseWireResponse(data, isHead, closed);
          if (parsed) finish({ kind: 'answered', response: parsed.response });
          else if (closed) finish({ kind: 'dropped', reason: 'closed', received: preview(data) });
        } catch (error) {
          finish({ kind: 'dropped', reason: `unparsable: ${String(error)}`, received: preview(data) });
        }
      };
      const onData = (chunk: Buffer): void => {
        data = Buffer.concat([data, chunk]);
        attempt(false);
      };
      const onClose = (): void => attempt(true);
      const timer = setTimeout(
        () => finish({ kind: 'dropped', reason: 'timeout', received: preview(data) }),
        this.timeoutMs,
      );
      socket.on('data', onData);
      socket.on('close', onClose);
      if (!this.#alive) attempt(true);
      else socket.write(bytes);
    });
    const keep =
      reuse &&
      this.#alive &&
      result.kind === 'answered' &&
      headerOf(result.response.headers, 'connection')?.toLowerCase() !== 'close' &&
      // Fastify's clientError answer carries no Date and is followed by a destroyed socket.
      headerOf(result.response.headers, 'date') !== undefined;
    if (!keep) this.close();
    return result;
  }

  close(): void {
    this.#alive = false;
    this.#socket?.destroy();
    this.#socket = null;
  }

  #connect(): Promise<Socket> {
    this.close();
    return new Promise((resolve, reject) => {
      const socket = connect(this.port, '127.0.0.1');
      this.#connections += 1;
      socket.once('connect', () => {
        this.#socket = socket;
        this.#alive = true;
        resolve(socket);
      });
      socket.on('error', (error) => {
        // Resets after a refused request are expected; the exchange reports what it got.
        if (!this.#alive && this.#socket !== socket) reject(error);
      });
      socket.on('end', () => {
        if (this.#socket === socket) this.#alive = false;
      });
      socket.on('close', () => {
        if (this.#socket === socket) this.#alive = false;
      });
    });
  }
}

function preview(data: Buffer): string {
  return JSON.stringify(data.subarray(0, 160).toString('latin1'));
}

/** Runs `work` over `items` with `lanes` workers, each owning one WireLane to `port`. */
export async function runOnLanes<T>(
  items: readonly T[],
  lanes: number,
  port: (item: T) => number,
  work: (item: T, lane: WireLane) => Promise<void>,
): Promise<{ connections: number }> {
  let next = 0;
  let connections = 0;
  const worker = async (): Promise<void> => {
    const byPort = new Map<number, WireLane>();
    try {
      while (next < items.length) {
        const item = items[next] as T;
        next += 1;
        const p = port(item);
        let lane = byPort.get(p);
        if (!lane) {
          lane = new WireLane(p);
          byPort.set(p, lane);
        }
        await work(item, lane);
      }
    } finally {
      for (const lane of byPort.values()) {
        connections += lane.connections;
        lane.close();
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, worker));
  return { connections };
}
