import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { DrfResponse } from '../drf/answer.js';

// A cached answer is sent many times: its flat header list is built once.
const flatHeaders = new WeakMap<DrfResponse, string[]>();

/** Writes a prepared answer: its headers as they are (Content-Length included), its body chunks. */
export function sendAnswer(res: ServerResponse, answer: DrfResponse): void {
  let flat = flatHeaders.get(answer);
  if (flat === undefined) flatHeaders.set(answer, (flat = answer.headers.flat()));
  res.writeHead(answer.status, flat);
  const { body } = answer;
  if (body.length === 1) res.end(body[0]);
  else if (body.length === 0) res.end();
  else {
    res.cork();
    for (const chunk of body) res.write(chunk);
    res.end();
  }
}

/**
 * The answer as raw bytes on a socket Node's parser gave up on (an unknown method, a request it
 * cannot take), then the connection closes, as gunicorn's sync worker closes every one.
 */
export function writeRawAnswer(
  socket: Socket,
  answer: DrfResponse,
  version: readonly number[] = [1, 1],
): void {
  if (!socket.writable) return;
  // gunicorn's own error page (util.write_error, headers led by Connection) is written as it is:
  // HTTP/1.1, no Date. Other answers repeat the request's version in the status line, as gunicorn does.
  const ownPage = answer.headers[0]?.[0] === 'Connection';
  const [major = 1, minor = 1] = ownPage ? [1, 1] : version;
  const lines = [`HTTP/${major}.${minor} ${answer.status} ${STATUS_CODES[answer.status] ?? 'Unknown'}`];
  if (!ownPage) lines.push(`Date: ${new Date().toUTCString()}`);
  if (!answer.headers.some(([name]) => name.toLowerCase() === 'connection')) lines.push('Connection: close');
  const chunked =
    (major > 1 || (major === 1 && minor >= 1)) &&
    !answer.headers.some(([name]) => name.toLowerCase() === 'content-length');
  for (const [name, value] of answer.headers) lines.push(`${name}: ${value}`);
  if (chunked) lines.push('Transfer-Encoding: chunked');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  const body = Buffer.concat(answer.body);
  const framed =
    chunked && body.length > 0
      ? [Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]
      : chunked
        ? [Buffer.from('0\r\n\r\n')]
        : [body];
  socket.end(Buffer.concat([head, ...framed]));
}
