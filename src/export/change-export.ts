import type { ChangeFilter, ChangeLines, ChangeStreamFilter, ReaderTarget, Store } from '../db/store.js';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { keysetBatches } from '../db/change-batches.js';
import { errorCodes, MirrorError, type ErrorCode } from '../errors.js';
import { workerEntry } from '../fs/worker-entry.js';

/**
 * The whole-history export of changes, one definition for `changes --csv/--json` and the server's
 * `/api/mirror/changes/export.csv|.jsonl`: the feed's CSV columns, or the API's JSON, a line each.
 */
export type ExportFormat = 'csv' | 'jsonl';

/** A piece of an export: text, or (a worker thread's batch) the same as UTF-8. */
export type ExportChunk = string | Uint8Array;

/** The CSV's writer, loaded for a CSV export only: a JSON one needs none of its wording. */
const csvRecords = async () => (await import('../web/change-csv.js')).changesCsvRecords;

/** One batch, read and written: the rows `filter` (with its `limit`) matches, as export text. */
export async function batchText(
  store: Store,
  filter: ChangeFilter,
  format: ExportFormat,
): Promise<ExportChunk> {
  const size = filter.limit ?? 0;
  if (format === 'jsonl') return (await store.changeLines(filter)).text;
  const changesCsvRecords = await csvRecords();
  for await (const { rows, subjects } of store.changesWithSubjects(filter, size)) {
    return changesCsvRecords(rows, subjects, { header: false });
  }
  return '';
}

export interface ExportOptions {
  /** Rows read and written per chunk: what the export holds at a time, per thread. */
  batchSize: number;
  /**
   * Read and write every other batch in a worker thread on a connection of its own, when the store
   * can open one (a SQLite file) and the export is longer than a batch: reading and writing a
   * batch costs about what the read alone costs the sqlite3 shell, so one thread cannot keep within
   * the export's goal of twice the shell's time; two, on two cores, can.
   */
  parallel: boolean;
}

/**
 * Every change `filter` matches, newest first, as export text in chunks of one batch each (the CSV's
 * head first, alone): a consumer that takes the chunks as it writes them holds a few batches (one
 * on one thread, up to LOOKAHEAD on two), whatever the history's length, and one that stops taking
 * them stops the reads.
 */
export async function* changeExportTexts(
  store: Store,
  filter: ChangeStreamFilter,
  format: ExportFormat,
  options: ExportOptions,
): AsyncGenerator<ExportChunk, void, undefined> {
  // The byte order mark and header first, rows or not: an empty CSV export is still a CSV.
  if (format === 'csv') yield (await csvRecords())([], new Map(), { header: true });
  const reader = options.parallel ? await secondReader(store, filter, format, options.batchSize) : null;
  if (reader === null) {
    yield* sequentialTexts(store, filter, format, options.batchSize);
    return;
  }
  try {
    yield* alternatingTexts(store, filter, format, options.batchSize, reader);
  } finally {
    await reader.close();
  }
}

/** One thread: keyset batches read as the consumer takes them. */
async function* sequentialTexts(
  store: Store,
  filter: ChangeStreamFilter,
  format: ExportFormat,
  batchSize: number,
): AsyncGenerator<ExportChunk, void, undefined> {
  if (format === 'jsonl') {
    for await (const lines of keysetBatches(
      (part) => store.changeLines(part),
      (lines: ChangeLines) => lines,
      filter,
      batchSize,
    ))
      yield lines.text;
    return;
  }
  const changesCsvRecords = await csvRecords();
  for await (const { rows, subjects } of store.changesWithSubjects(filter, batchSize)) {
    yield changesCsvRecords(rows, subjects, { header: false });
  }
}

/** Batches handed out ahead of the one being written: the worker always has its next one queued. */
const LOOKAHEAD = 4;

/**
 * Two threads: the even batches read and written here, the odd ones by the worker, each batch's ends
 * found first (`changeIdAt`), so both read the very rows the keyset read would, written in its
 * order. The worker is sent its batches up to LOOKAHEAD ahead, so neither thread waits for the other
 * to hand it work; the texts waiting to be written stay a few batches.
 */
async function* alternatingTexts(
  store: Store,
  filter: ChangeStreamFilter,
  format: ExportFormat,
  batchSize: number,
  reader: SecondReader,
): AsyncGenerator<ExportChunk, void, undefined> {
  const plans = batchPlans(store, filter, batchSize);
  const queue: (Promise<Uint8Array> | ChangeFilter)[] = [];
  let handedOut = 0;
  let planned = true;
  for (;;) {
    while (planned && queue.length < LOOKAHEAD) {
      const next = await plans.next();
      if (next.done === true) planned = false;
      else if (handedOut++ % 2 === 0) queue.push(next.value);
      else {
        const remote = reader.text(next.value);
        // Marked handled: a consumer that stops before taking it must not leave a rejection unheard.
        remote.catch(() => undefined);
        queue.push(remote);
      }
    }
    const head = queue.shift();
    if (head === undefined) return;
    const chunk = head instanceof Promise ? await head : await batchText(store, head, format);
    if (chunk.length > 0) yield chunk;
  }
}

/**
 * The keyset's batches as filters, each bounded above by the id the one before ended on, the first
 * by the newest id when the export began: a sync that commits meanwhile adds only newer ids, which
 * would otherwise push rows of the first batch past the end found for it, and out of the export.
 */
async function* batchPlans(
  store: Store,
  filter: ChangeStreamFilter,
  batchSize: number,
): AsyncGenerator<ChangeFilter, void, undefined> {
  let remaining = filter.limit ?? Number.POSITIVE_INFINITY;
  let beforeId = filter.beforeId;
  if (beforeId === undefined) {
    const newest = await store.changeIdAt(filter, 0);
    if (newest === null) return;
    beforeId = newest + 1;
  }
  while (remaining > 0) {
    const limit = Math.min(batchSize, remaining);
    const plan: ChangeFilter = { ...filter, limit, beforeId };
    const last = await store.changeIdAt(plan, limit - 1);
    yield plan;
    if (last === null) return;
    remaining -= limit;
    beforeId = last;
  }
}

/** Worker threads serving exports at once, process-wide: past it an export runs on one thread. */
const MAX_EXPORT_THREADS = 2;
let exportThreads = 0;

/** How many export threads run now, process-wide (tests; at most MAX_EXPORT_THREADS). */
export function exportThreadsRunning(): number {
  return exportThreads;
}

/** The worker's side of an export: batches read on its own connection. */
interface SecondReader {
  /** A batch's text, as UTF-8. */
  text(filter: ChangeFilter): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** A worker for an export longer than one batch, on a store another thread can open; else null. */
async function secondReader(
  store: Store,
  filter: ChangeStreamFilter,
  format: ExportFormat,
  batchSize: number,
): Promise<SecondReader | null> {
  const target = store.readerTarget;
  if (target === null || exportThreads >= MAX_EXPORT_THREADS) return null;
  // A file deleted or replaced under this connection: a new one would open another database.
  if (store.storageProblem() !== null) return null;
  if ((filter.limit ?? Number.POSITIVE_INFINITY) <= batchSize) return null;
  // The thread's place is taken before the read below, so exports starting at once cannot all see
  // a free place; an export within one batch gives it back.
  exportThreads++;
  try {
    if ((await store.changeIdAt(filter, batchSize)) !== null) return startReader(target, format);
  } catch (error) {
    exportThreads--;
    throw error;
  }
  exportThreads--;
  return null;
}

/** The thread's module beside this one: `.ts` under tsx (tests), `.js` once built. */
const THREAD_SCRIPT = fileURLToPath(import.meta.url).replace(
  /change-export\.([cm]?[jt]s)$/,
  'change-export-thread.$1',
);

export const EXPORT_THREAD_ROLE = 'coworker-mirror export thread';

export interface ExportThreadData {
  role: typeof EXPORT_THREAD_ROLE;
  target: ReaderTarget;
  format: ExportFormat;
}

/** What the thread answers a batch with: its text, or why it could not. */
export type ExportThreadReply =
  { seq: number; bytes: Uint8Array } | { seq: number; error: { message: string; code: string | undefined } };

/** Starts the thread in the place `secondReader` took; its `close` gives the place back. */
function startReader(target: ReaderTarget, format: ExportFormat): SecondReader {
  const entry = workerEntry(THREAD_SCRIPT);
  let worker: Worker;
  try {
    worker = new Worker(entry.code, {
      eval: entry.eval,
      workerData: { role: EXPORT_THREAD_ROLE, target, format } satisfies ExportThreadData,
    });
  } catch (error) {
    exportThreads--;
    throw error;
  }
  const waiting = new Map<number, { resolve: (bytes: Uint8Array) => void; reject: (error: Error) => void }>();
  const failAll = (error: Error) => {
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  };
  worker.on('message', (reply: ExportThreadReply) => {
    const settle = waiting.get(reply.seq);
    waiting.delete(reply.seq);
    if ('bytes' in reply) settle?.resolve(reply.bytes);
    else settle?.reject(threadError(reply.error));
  });
  worker.on('error', (error) =>
    failAll(
      new MirrorError(
        'DB_ERROR',
        `the export's reader thread failed: ${error.message}`,
        {},
        { cause: error },
      ),
    ),
  );
  worker.on('exit', () => failAll(new MirrorError('DB_ERROR', "the export's reader thread stopped")));
  let seq = 0;
  let closed = false;
  return {
    text(filter) {
      return new Promise<Uint8Array>((resolve, reject) => {
        const id = seq++;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ seq: id, filter });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      exportThreads--;
      await worker.terminate();
    },
  };
}

/** The thread's error as the one the same read would have raised here (its code kept). */
function threadError(error: { message: string; code: string | undefined }): MirrorError {
  const code = (errorCodes as readonly string[]).includes(error.code ?? '')
    ? (error.code as ErrorCode)
    : 'DB_ERROR';
  return new MirrorError(code, error.message);
}
