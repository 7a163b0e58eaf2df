import { randomBytes } from 'node:crypto';
import {
  linkSync,
  openSync,
  closeSync,
  fsyncSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { mirrorIdOf } from '../db/store-identity.js';
import type { Store } from '../db/store.js';
import { MirrorError } from '../errors.js';
import { makeFolder } from '../fs/make-folder.js';

/** The file in a media folder that names the one database whose files it holds. */
export const OWNER_FILE = 'owner.json';

/** A database as a media folder's owner file names it. */
export interface FolderOwner {
  /** The database's mirror id (`store_identity`): another database never has it. */
  mirrorId: string;
  /** Where the database is, for people: the SQLite file, or the PostgreSQL URL with its password masked. */
  database: string;
  /**
   * The SQLite file itself, by device and inode: a copy of the file carries the same mirror id and
   * is told apart by this. Null for PostgreSQL (the folder is a cache there).
   */
  file: { path: string; dev: string; ino: string } | null;
}

const ownerFileSchema = z.object({
  mirror_id: z.string().min(1),
  database: z.string(),
  file: z.object({ path: z.string(), dev: z.string(), ino: z.string() }).nullable(),
  claimed_at: z.string(),
});

/** What the owner file of `dir` says: nobody (no file), an owner, or something unreadable. */
export type OwnerFile =
  { kind: 'none' } | { kind: 'owner'; owner: FolderOwner } | { kind: 'unreadable'; reason: string };

/** This database as an owner: its mirror id (made on first ask) and, on SQLite, its file. */
export async function folderOwnerOf(
  store: Pick<Store, 'identityValue' | 'file' | 'readerTarget'>,
): Promise<FolderOwner> {
  const mirrorId = await mirrorIdOf(store);
  const path = store.readerTarget?.file ?? null;
  return { mirrorId, database: store.file, file: path === null ? null : fileIdentity(path) };
}

function fileIdentity(path: string): FolderOwner['file'] {
  const found = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (!found) return null;
  return { path: resolve(path), dev: String(found.dev), ino: String(found.ino) };
}

export function readOwnerFile(dir: string): OwnerFile {
  let text: string;
  try {
    text = readFileSync(join(dir, OWNER_FILE), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'none' };
    return { kind: 'unreadable', reason: (error as Error).message };
  }
  let parsed: z.infer<typeof ownerFileSchema>;
  try {
    parsed = ownerFileSchema.parse(JSON.parse(text));
  } catch {
    return { kind: 'unreadable', reason: `${OWNER_FILE} is not an owner file this mirror wrote` };
  }
  return {
    kind: 'owner',
    owner: { mirrorId: parsed.mirror_id, database: parsed.database, file: parsed.file },
  };
}

/**
 * How a recorded owner relates to this database: `ours`; `renamed` (the same file, no longer at the
 * path recorded); `moved` (our id, and the file it names is no longer there: the database was moved to
 * another file system or restored from a backup); `copy` (our id, but the file it names is still
 * there and is another file: this database is a copy of that one); `foreign`.
 */
export function judgeOwner(
  recorded: FolderOwner,
  us: FolderOwner,
): 'ours' | 'renamed' | 'moved' | 'copy' | 'foreign' {
  if (recorded.mirrorId !== us.mirrorId) return 'foreign';
  if (recorded.file === null || us.file === null) return 'ours';
  const there = recorded.file.path === us.file.path ? us.file : fileIdentity(recorded.file.path);
  if (sameFile(recorded.file, us.file)) {
    // The recorded path still reaching this very file is another name of it (a link, a mount).
    return there !== null && sameFile(there, us.file) ? 'ours' : 'renamed';
  }
  return there !== null && sameFile(there, recorded.file) ? 'copy' : 'moved';
}

function sameFile(a: NonNullable<FolderOwner['file']>, b: NonNullable<FolderOwner['file']>): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * Writes the owner file of `dir` (made if missing), durably: a complete temp file, fsynced, then
 * linked into place, which fails when an owner file is there already (another process claimed the
 * folder first: false), or renamed over the old one when `replace` (the database moved).
 */
export function writeOwnerFile(dir: string, owner: FolderOwner, options: { replace: boolean }): boolean {
  makeFolder(dir);
  const text = `${JSON.stringify(
    {
      mirror_id: owner.mirrorId,
      database: owner.database,
      file: owner.file,
      claimed_at: new Date().toISOString(),
    },
    null,
    2,
  )}\n`;
  const temp = join(dir, `.${OWNER_FILE}.${randomBytes(6).toString('hex')}`);
  writeFileSync(temp, text, { flag: 'wx' });
  syncPath(temp);
  try {
    if (options.replace) {
      renameSync(temp, join(dir, OWNER_FILE));
    } else {
      try {
        linkSync(temp, join(dir, OWNER_FILE));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      }
    }
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // Renamed into place: nothing left to remove.
    }
  }
  syncPath(dir);
  return true;
}

function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The words that say whose folder it is and how to fix it, for MEDIA_DIR_FOREIGN. */
function refusal(dir: string, recorded: FolderOwner, us: FolderOwner, verdict: 'copy' | 'foreign'): string {
  const whose =
    verdict === 'copy'
      ? `the database at ${recorded.file?.path ?? recorded.database}, of which ${us.database} is a copy ` +
        `(both carry mirror id ${us.mirrorId})`
      : `another database (${recorded.database}, mirror id ${recorded.mirrorId}), not to ${us.database} ` +
        `(mirror id ${us.mirrorId})`;
  return (
    `MEDIA_DIR: the media folder ${dir} belongs to ${whose}; nothing in it was used or deleted. ` +
    'Give this database a folder of its own: set MEDIA_DIR to a new or empty folder. ' +
    `If that database no longer exists, delete ${dir} and start again`
  );
}

/** MEDIA_DIR_FOREIGN: the folder's owner file names another database, or cannot be read. */
export function foreignFolderError(dir: string, found: OwnerFile, us: FolderOwner): MirrorError {
  if (found.kind === 'owner') {
    const verdict = judgeOwner(found.owner, us);
    if (verdict === 'copy' || verdict === 'foreign') {
      return new MirrorError('MEDIA_DIR_FOREIGN', refusal(dir, found.owner, us, verdict), {
        dir,
        owner: found.owner,
        database: us.database,
        mirrorId: us.mirrorId,
      });
    }
  }
  const reason = found.kind === 'unreadable' ? found.reason : `it has no ${OWNER_FILE}`;
  return new MirrorError(
    'MEDIA_DIR_FOREIGN',
    `MEDIA_DIR: cannot tell which database the media folder ${dir} belongs to (${reason}); nothing in it ` +
      `was deleted. Set MEDIA_DIR to a new or empty folder, or fix ${join(dir, OWNER_FILE)}`,
    { dir, database: us.database, mirrorId: us.mirrorId },
  );
}

/**
 * Throws MEDIA_DIR_FOREIGN unless the owner file of `dir` names this very database now: asked
 * right before anything in the folder is deleted, so a folder is never cleaned for another database.
 */
export function assertOwnedBy(dir: string, us: FolderOwner): void {
  const found = readOwnerFile(dir);
  const verdict = found.kind === 'owner' ? judgeOwner(found.owner, us) : 'foreign';
  if (verdict === 'ours' || verdict === 'renamed') return;
  throw foreignFolderError(dir, found, us);
}
