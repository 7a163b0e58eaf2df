import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { ByteSpan } from '../store.js';
import type { PgContext } from './context.js';
import { pgSqlPort, pgTransactionPort } from './sql-port.js';

// The mirrored files' bytes on PostgreSQL (media_blob_chunks; why chunks, in schema.ts).

/** Bytes per chunk: a write holds one in memory, a Range read fetches only the chunks it spans. */
export const MEDIA_BLOB_CHUNK_BYTES = 256 * 1024;
/** Chunks one read of a stream fetches: what a served file holds in memory at most (2 MiB). */
const CHUNKS_PER_READ = 8;

/** Whether the chunks of `sha256` are there (written whole in one transaction, so seq 0 says all). */
async function hasChunks(ctx: PgContext, sha256: string): Promise<boolean> {
  const sql = 'select 1 from media_blob_chunks where sha256 = ? and seq = 0';
  return (await pgSqlPort(ctx.pool).values(sql, [sha256])).length > 0;
}

/**
 * Copies a complete local file (already hashed to `sha256`) into the database, one chunk in memory
 * at a time, in one transaction: readers see every chunk or none. Bytes already there are kept.
 * Returns whether it wrote them.
 */
export async function putBlob(ctx: PgContext, sha256: string, path: string): Promise<boolean> {
  if (await hasChunks(ctx, sha256)) return false;
  return pgTransactionPort(ctx.pool).write(async (tx) => {
    // ON CONFLICT: another instance's copy of the same bytes committed first; same bytes either way.
    const sql = 'insert into media_blob_chunks (sha256, seq, bytes) values (?, ?, ?) on conflict do nothing';
    const insert = (seq: number, bytes: Buffer) => tx.run(sql, [sha256, seq, bytes]);
    let seq = 0;
    const file = createReadStream(path, { highWaterMark: MEDIA_BLOB_CHUNK_BYTES });
    for await (const piece of fileChunks(file)) await insert(seq++, piece);
    // An empty file is one empty chunk, so "seq 0 exists" still means "the file is here".
    if (seq === 0) await insert(0, Buffer.alloc(0));
    return true;
  });
}

/** A file stream re-cut into exact MEDIA_BLOB_CHUNK_BYTES pieces (the last may be shorter). */
async function* fileChunks(file: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let pending = Buffer.alloc(0);
  for await (const data of file) {
    pending = Buffer.concat([pending, data]);
    for (; pending.length >= MEDIA_BLOB_CHUNK_BYTES; pending = pending.subarray(MEDIA_BLOB_CHUNK_BYTES)) {
      yield pending.subarray(0, MEDIA_BLOB_CHUNK_BYTES);
    }
  }
  if (pending.length > 0) yield pending;
}

/**
 * The bytes [start, end] (inclusive) of a stored file as a stream, or null when the database holds
 * no such file. Chunks are fetched CHUNKS_PER_READ at a time as the stream is read, so a slow client
 * holds one batch, never the file. A chunk gone mid-stream (retention dropped the file) fails the stream.
 */
export async function openBlob(ctx: PgContext, sha256: string, span: ByteSpan): Promise<Readable | null> {
  if (!(await hasChunks(ctx, sha256))) return null;
  return Readable.from(blobBytes(ctx, sha256, span), { objectMode: false });
}

async function* blobBytes(ctx: PgContext, sha256: string, { start, end }: ByteSpan): AsyncGenerator<Buffer> {
  if (end < start) return;
  const first = Math.floor(start / MEDIA_BLOB_CHUNK_BYTES);
  const last = Math.floor(end / MEDIA_BLOB_CHUNK_BYTES);
  for (let from = first; from <= last; from += CHUNKS_PER_READ) {
    const to = Math.min(last, from + CHUNKS_PER_READ - 1);
    const found = await pgSqlPort(ctx.pool).rows<[number, Buffer]>(
      'select seq, bytes from media_blob_chunks where sha256 = ? and seq between ? and ? order by seq',
      [sha256, from, to],
    );
    if (found.length !== to - from + 1) {
      throw new Error(`media blob ${sha256} lacks chunks ${from}..${to} (dropped while served?)`);
    }
    for (const [seq, bytes] of found) {
      const base = seq * MEDIA_BLOB_CHUNK_BYTES;
      yield bytes.subarray(Math.max(0, start - base), Math.min(bytes.length, end - base + 1));
    }
  }
}

/**
 * Deletes the chunks no kept blob row vouches for: a killed run's uploads and files retention
 * dropped. Call only while holding the run lock (a run uploads before its rows commit). How many files.
 */
export async function dropUnreferencedBlobs(ctx: PgContext): Promise<number> {
  const [files] = await pgSqlPort(ctx.pool).values<number>(
    `with gone as (
       delete from media_blob_chunks c
        where not exists (select 1 from media_blobs b where b.sha256 = c.sha256 and b.dropped_at is null)
       returning c.sha256)
     select count(distinct sha256) from gone`,
  );
  return files ?? 0;
}

/** The files retention dropped (their chunks went with them), by sha256. */
export function droppedBlobs(ctx: PgContext): Promise<string[]> {
  return pgSqlPort(ctx.pool).values('select sha256 from media_blobs where dropped_at is not null');
}

/** The kept files whose chunks are not there (seq 0 says a file's chunks are all there), by sha256. */
export function keptBlobsWithoutBytes(ctx: PgContext): Promise<string[]> {
  return pgSqlPort(ctx.pool).values(
    `select b.sha256 from media_blobs b
      where b.dropped_at is null
        and not exists (select 1 from media_blob_chunks c where c.sha256 = b.sha256 and c.seq = 0)
      order by b.sha256`,
  );
}
