import type { ChangeFilter } from '../db/store.js';
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../db/open.js';
import { MirrorError } from '../errors.js';
import {
  batchText,
  EXPORT_THREAD_ROLE,
  type ExportThreadData,
  type ExportThreadReply,
} from './change-export.js';

// An export's second reader (change-export.ts): its own read-only connection to the same SQLite
// file, answering each batch it is sent with the batch's text, one at a time, in the order sent.
// It writes nothing and migrates nothing: the thread that started it opened the database first.

const data = workerData as Partial<ExportThreadData> | null;
const utf8 = new TextEncoder();

if (parentPort !== null && data?.role === EXPORT_THREAD_ROLE && data.target && data.format) {
  const port = parentPort;
  const { target, format } = data;
  const store = openDatabase(target.file, { readonly: true, migrate: false, immutable: target.immutable });
  let queue = Promise.resolve();
  port.on('message', (message: { seq: number; filter: ChangeFilter }) => {
    queue = queue.then(async () => {
      let bytes: Uint8Array<ArrayBuffer>;
      try {
        // UTF-8 here, and moved, not copied: the thread that writes the export encodes none of
        // this thread's batches, and receives no copy of their bytes.
        bytes = movable(await batchText(store, message.filter, format));
      } catch (error) {
        const code = error instanceof MirrorError ? error.code : undefined;
        const reply: ExportThreadReply = {
          seq: message.seq,
          error: { message: String((error as Error).message ?? error), code },
        };
        port.postMessage(reply);
        return;
      }
      const reply: ExportThreadReply = { seq: message.seq, bytes };
      port.postMessage(reply, [bytes.buffer]);
    });
  });
}

/**
 * A chunk as bytes whose memory is theirs alone, so it can be moved to the other thread: text is
 * encoded; bytes that share their memory (a slice of a larger buffer) are copied.
 */
function movable(chunk: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof chunk === 'string') return utf8.encode(chunk);
  const { buffer } = chunk;
  if (buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength) {
    return new Uint8Array(buffer);
  }
  return new Uint8Array(chunk);
}
