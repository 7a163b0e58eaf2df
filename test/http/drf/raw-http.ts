import { connect } from 'node:net';
import { WAIT_MS } from '../../helpers/patience.js';

/** A response read off a raw socket: what the peer sent, not what a client library would make of it. */
export interface RawResponse {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

/** Sends `request` bytes as-is on a fresh connection and reads the answer until the peer closes. */
export function sendRaw(port: number, request: Buffer, isHead: boolean): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    socket.setTimeout(WAIT_MS, () => socket.destroy(new Error(`raw request idle for ${WAIT_MS} ms`)));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks), isHead));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

export function parseResponse(raw: Buffer, isHead: boolean): RawResponse {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd < 0)
    throw new Error(`no response head in ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const [statusLine = '', ...lines] = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = lines.map((line): [string, string] => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()];
  });
  const status = Number(statusLine.split(' ')[1]);
  const rest = raw.subarray(headEnd + 4);
  const get = (name: string): string | undefined => headers.find(([n]) => n.toLowerCase() === name)?.[1];
  let body: Buffer;
  if (isHead || status === 304 || status === 204) body = Buffer.alloc(0);
  else if (get('transfer-encoding')?.toLowerCase() === 'chunked') body = dechunk(rest);
  else if (get('content-length') !== undefined) body = rest.subarray(0, Number(get('content-length')));
  else body = rest;
  return { status, headers, body };
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!size) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
