import { createHash, randomBytes } from 'node:crypto';
import { open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { snapshotOptions, snapshotPages, valuesFromTails, type PreparedSnapshot } from '../drf/snapshot.js';
import { makeFolder } from '../fs/make-folder.js';
import { pyJsonDumps } from '../drf/python-json.js';
import { defaultOptionsBody } from '../drf/metadata.js';

/** The file in the media folder that holds the last snapshot this instance served. */
export const LOCAL_SNAPSHOT_FILE = 'served-snapshot.bin';

/** What the file starts with: a file of any other kind (or version) is told apart at its first bytes. */
const MAGIC = Buffer.from('coworker-mirror served snapshot 1\n');
const DIGEST_BYTES = 32;
/** The header is JSON: its length is a 4-byte big-endian count after the magic. */
const LENGTH_BYTES = 4;

/** A media file the served answers point at: what the media route needs to answer it from the folder. */
export interface LocalMedia {
  url: string;
  sha256: string;
  size: number;
  contentType: string;
}

/** The served run as readiness and the pages name it. */
export interface LocalRun {
  runId: number;
  entries: number;
  fetchedAt: Date;
  upstream: string;
}

/** Everything a server needs to answer the list endpoint and its media without its database. */
export interface LocalSnapshot {
  /** The database's mirror id (`store_identity`) and where it is: whose snapshot this is. */
  mirrorId: string;
  database: string;
  run: LocalRun;
  prepared: PreparedSnapshot;
  media: readonly LocalMedia[];
}

const headerSchema = z.object({
  mirrorId: z.string().min(1),
  database: z.string(),
  run: z.object({
    runId: z.number().int().positive(),
    entries: z.number().int().nonnegative(),
    fetchedAt: z.string(),
    upstream: z.string(),
  }),
  snapshot: z.object({
    id: z.string(),
    count: z.number().int().nonnegative(),
    pageSize: z.number().int().positive(),
    lastModified: z.string(),
    fetchedAtIso: z.string(),
    /** The upstream's OPTIONS body, or null for DRF's default. */
    optionsBody: z.string().nullable(),
  }),
  pageLengths: z.array(z.number().int().nonnegative()),
  media: z.array(
    z.object({
      url: z.string(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      size: z.number().int().nonnegative(),
      contentType: z.string(),
    }),
  ),
});

/** The OPTIONS body as stored: null when the snapshot serves DRF's default metadata. */
function optionsBodyOf(prepared: PreparedSnapshot): string | null {
  const text = prepared.options.compact.toString('utf8');
  return text === pyJsonDumps(defaultOptionsBody()) ? null : text;
}

/** The file's bytes but the digest, in the order they are written and hashed. */
function fileParts(snapshot: LocalSnapshot): Buffer[] {
  const { prepared } = snapshot;
  const header: z.infer<typeof headerSchema> = {
    mirrorId: snapshot.mirrorId,
    database: snapshot.database,
    run: { ...snapshot.run, fetchedAt: snapshot.run.fetchedAt.toISOString() },
    snapshot: {
      id: prepared.id,
      count: prepared.count,
      pageSize: prepared.pageSize,
      lastModified: prepared.lastModified,
      fetchedAtIso: prepared.fetchedAtIso,
      optionsBody: optionsBodyOf(prepared),
    },
    pageLengths: prepared.pageTails.map((tail) => tail.length),
    media: [...snapshot.media],
  };
  const headerBytes = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeUInt32BE(headerBytes.length);
  return [MAGIC, length, headerBytes, ...prepared.pageTails];
}

/** The bytes the file would have, for the size bound before anything is written. */
export function localSnapshotBytes(snapshot: LocalSnapshot): number {
  return fileParts(snapshot).reduce((sum, part) => sum + part.length, DIGEST_BYTES);
}

/**
 * Writes the file so that a reader finds the old one or the new one whole, never a mix: a temp
 * file in the same folder, fsynced, renamed over the old one, then the folder fsynced so the rename
 * itself survives a power cut. A sha256 over everything ends the file: a torn or altered file is
 * told apart when it is read.
 */
export async function writeLocalSnapshot(path: string, snapshot: LocalSnapshot): Promise<number> {
  const dir = dirname(path);
  makeFolder(dir);
  const temp = join(dir, `.${LOCAL_SNAPSHOT_FILE}.${randomBytes(6).toString('hex')}`);
  const handle = await open(temp, 'wx', 0o600);
  let bytes = 0;
  try {
    const hash = createHash('sha256');
    for (const part of fileParts(snapshot)) {
      hash.update(part);
      await handle.write(part);
      bytes += part.length;
    }
    await handle.write(hash.digest());
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return bytes + DIGEST_BYTES;
}

/** What reading the file found: the snapshot, or why it cannot be used, in words that name the file. */
export type LocalSnapshotRead =
  { kind: 'found'; snapshot: LocalSnapshot } | { kind: 'refused'; reason: string };

/**
 * Reads and checks the file: present, within `maxBytes`, of this format, whole (its digest), and
 * consistent (page lengths, counts). Whose it is, the caller decides. Never throws for the file's
 * content: any fault is a refusal naming the file.
 */
export async function readLocalSnapshot(path: string, maxBytes: number): Promise<LocalSnapshotRead> {
  const refused = (why: string): LocalSnapshotRead => ({ kind: 'refused', reason: `${path}: ${why}` });
  let bytes: Buffer;
  try {
    const { size } = await stat(path);
    if (size > maxBytes) return refused(`${size} bytes, over the bound of ${maxBytes}`);
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return refused('no local snapshot there (none was written yet)');
    return refused(`cannot be read (${(error as Error).message})`);
  }
  const least = MAGIC.length + LENGTH_BYTES + DIGEST_BYTES;
  if (bytes.length < least || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    return refused('not a snapshot file this version writes');
  }
  const body = bytes.subarray(0, bytes.length - DIGEST_BYTES);
  const digest = createHash('sha256').update(body).digest();
  if (!digest.equals(bytes.subarray(bytes.length - DIGEST_BYTES))) {
    return refused('its checksum does not match: the file is torn or altered');
  }
  return decode(body, refused);
}

function decode(body: Buffer, refused: (why: string) => LocalSnapshotRead): LocalSnapshotRead {
  const headerLength = body.readUInt32BE(MAGIC.length);
  const headerStart = MAGIC.length + LENGTH_BYTES;
  const headerEnd = headerStart + headerLength;
  if (headerEnd > body.length) return refused('its header runs past the end of the file');
  const parsed = headerSchema.safeParse(parseJsonText(body.subarray(headerStart, headerEnd)));
  if (!parsed.success) return refused('its header is not one this version writes');
  const header = parsed.data;
  const { snapshot } = header;
  const numPages = snapshotPages(snapshot.count, snapshot.pageSize);
  const total = header.pageLengths.reduce((sum, n) => sum + n, 0);
  if (header.pageLengths.length !== numPages || headerEnd + total !== body.length) {
    return refused('its pages do not add up to its length');
  }
  const pageTails: Buffer[] = [];
  let at = headerEnd;
  for (const length of header.pageLengths) {
    // Copied out, so the file's buffer is not kept alive by one page.
    pageTails.push(Buffer.from(body.subarray(at, at + length)));
    at += length;
  }
  const prepared: PreparedSnapshot = {
    id: snapshot.id,
    count: snapshot.count,
    pageSize: snapshot.pageSize,
    numPages,
    pageTails,
    entryValues: valuesFromTails(pageTails, snapshot.pageSize, snapshot.count),
    options: snapshotOptions(snapshot.optionsBody),
    lastModified: snapshot.lastModified,
    fetchedAtIso: snapshot.fetchedAtIso,
  };
  const run: LocalRun = { ...header.run, fetchedAt: new Date(header.run.fetchedAt) };
  return {
    kind: 'found',
    snapshot: { mirrorId: header.mirrorId, database: header.database, run, prepared, media: header.media },
  };
}

function parseJsonText(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
}
