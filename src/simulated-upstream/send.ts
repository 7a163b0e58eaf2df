import type { ServerResponse } from 'node:http';
import type { DrfResponse } from '../drf/answer.js';
import { ALLOW } from '../drf/view.js';

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Headers in the order DRF's Response leaves them (Django's middleware adds its own after). */
export function drfAnswer(status: number, body: string, extra: Record<string, string> = {}): Answer {
  return {
    status,
    headers: { 'Content-Type': 'application/json', Vary: 'Accept', Allow: ALLOW, ...extra },
    body,
  };
}

/** A DRF core answer as it is: its headers (Content-Length included) and its body chunks. */
export function sendDrf(res: ServerResponse, answer: DrfResponse): void {
  res.writeHead(answer.status, answer.headers.flat());
  res.end(answer.body.length === 1 ? answer.body[0] : Buffer.concat(answer.body));
}

/** A GET answer in the shape the transport faults cut and pad (they set their own length). */
export function toAnswer(answer: DrfResponse): Answer {
  const headers = Object.fromEntries(
    answer.headers.filter(([name]) => name.toLowerCase() !== 'content-length'),
  );
  return { status: answer.status, headers, body: Buffer.concat(answer.body).toString('utf8') };
}

/** HEAD gets the headers and Content-Length of the GET answer, and no body (as Django does). */
export function send(res: ServerResponse, method: string | undefined, answer: Answer): void {
  const body = Buffer.from(answer.body, 'utf8');
  res.writeHead(answer.status, { ...answer.headers, 'Content-Length': String(body.length) });
  res.end(method === 'HEAD' ? undefined : body);
}

// A reset that overtakes unread data reaches a Node client as a plain EOF (libuv reports POLLHUP
// after a partial read as end of stream), so the RST waits until the half body has been read.
const RESET_AFTER_MS = 50;

/**
 * Headers promise the whole body; half of it goes out, then the connection ends: with a FIN
 * (`close`) or a TCP reset (`reset`).
 */
export function sendCut(res: ServerResponse, answer: Answer, how: 'close' | 'reset'): void {
  const body = Buffer.from(answer.body, 'utf8');
  res.writeHead(answer.status, { ...answer.headers, 'Content-Length': String(body.length) });
  res.write(body.subarray(0, Math.floor(body.length / 2)), () => {
    const socket = res.socket;
    if (!socket) return;
    if (how === 'close') return void socket.end();
    setTimeout(() => {
      if (!socket.destroyed) socket.resetAndDestroy();
    }, RESET_AFTER_MS).unref();
  });
}

const PAD_CHUNK = Buffer.alloc(64 * 1024, 0x20);

/**
 * The page body grown to `bytes` with whitespace before its closing brace (still valid JSON), written
 * in chunks with backpressure so a client that gives up early does not make us buffer it all.
 */
export function sendOversize(res: ServerResponse, answer: Answer, bytes: number, chunked: boolean): void {
  const body = Buffer.from(answer.body, 'utf8');
  const head = body.subarray(0, body.length - 1);
  const tail = body.subarray(body.length - 1);
  let padding = Math.max(0, bytes - body.length);
  const headers: Record<string, string> = { ...answer.headers };
  if (!chunked) headers['Content-Length'] = String(head.length + padding + tail.length);
  res.writeHead(answer.status, headers);
  res.write(head);
  const pump = (): void => {
    while (padding > 0 && !res.destroyed) {
      const chunk = PAD_CHUNK.subarray(0, Math.min(padding, PAD_CHUNK.length));
      padding -= chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end(tail);
  };
  pump();
}
