import type { Dispatcher } from 'undici';

type Body = Dispatcher.ResponseData['body'];

/**
 * Drops a body we will not read. undici reports a destroyed, unfinished body as an 'error' event;
 * with nobody listening that would crash the process, and here it is exactly what we asked for.
 */
function discard(body: Body): void {
  body.on('error', () => undefined);
  body.destroy();
}

export type CappedRead = { ok: true; bytes: Buffer } | { ok: false; receivedBytes: number };

/**
 * Reads a response body, stopping as soon as it passes `limit` bytes: the socket is destroyed there
 * rather than after downloading whatever a broken or hostile upstream keeps sending.
 */
export async function readBodyCapped(
  body: Body,
  limit: number,
  declaredLength?: number,
): Promise<CappedRead> {
  if (declaredLength !== undefined && declaredLength > limit) {
    discard(body);
    return { ok: false, receivedBytes: 0 };
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limit) {
      discard(body);
      return { ok: false, receivedBytes: total };
    }
    chunks.push(chunk);
  }
  return { ok: true, bytes: chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, total) };
}

/** Reads at most `limit` bytes for an error excerpt, then drops the rest of the body. */
export async function readExcerpt(body: Body, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= limit) break;
    }
  } catch {
    // An excerpt is best effort: the status already says what went wrong.
  } finally {
    discard(body);
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** Parses a Content-Length header value; anything odd is left to the streaming cap. */
export function declaredContentLength(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string' || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}
