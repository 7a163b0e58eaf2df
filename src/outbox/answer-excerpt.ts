import type { Dispatcher } from 'undici';

/**
 * The first `maxBytes` of an answer's body (or all of a shorter one), for people to read in a log;
 * the rest is dropped unread. A multi-byte character cut at the limit decodes as U+FFFD.
 */
export async function answerExcerpt(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      chunks.push(buffer);
      size += buffer.length;
      if (size >= maxBytes) break;
    }
  } finally {
    if (!body.destroyed) body.destroy();
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, maxBytes));
}
