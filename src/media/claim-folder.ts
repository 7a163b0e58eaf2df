import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import {
  folderOwnerOf,
  foreignFolderError,
  judgeOwner,
  readOwnerFile,
  writeOwnerFile,
  type FolderOwner,
} from './folder-owner.js';
import { MediaStore } from './media-store.js';

/** A media folder and where this database's files may be found besides (config.media). */
export interface FolderPlace {
  /** The folder used: MEDIA_DIR, else `ownDir`. */
  dir: string;
  /** The folder named after this database (what `dir` is when MEDIA_DIR is unset); none: unknown. */
  ownDir?: string | undefined;
  /** The folder every database used by default before each had its own: files are linked in from there. */
  legacyDir?: string | undefined;
}

/**
 * What this process may do in a media folder: `owned` (its owner file names this database: files
 * no row of it references may be deleted) or `shared` (no owner file, and files this database does
 * not reference: another database may use it, so it is read and written but nothing is deleted).
 */
export type FolderClaim = { kind: 'owned'; owner: FolderOwner } | { kind: 'shared'; unreferenced: number };

export interface ClaimDeps {
  owner: FolderOwner;
  /** The sha256s of the files this database keeps (its rows), read only when a folder has no owner. */
  live: () => Promise<Set<string>>;
  logger: Logger;
}

/**
 * Makes `place.dir` this database's, or says why it cannot be:
 * - an owner file naming this database: owned (rewritten to name where it is, when it was moved);
 * - one naming another database (or a copy's original), or unreadable: throws MEDIA_DIR_FOREIGN;
 * - none, in the folder named after this database or in one that is missing, empty, or holds only
 *   files this database references: this database's files are linked in from the legacy folder
 *   (the folder named after it only), then the owner file is written: owned;
 * - none, in a folder holding files this database does not reference: shared, nothing written.
 * Adds files and never deletes any, so it needs no run lock.
 */
export async function claimMediaFolder(place: FolderPlace, deps: ClaimDeps): Promise<FolderClaim> {
  const { owner, logger } = deps;
  // Twice at most: an owner file another process wrote between our look and our write is judged.
  for (let attempt = 0; attempt < 2; attempt++) {
    const found = readOwnerFile(place.dir);
    if (found.kind === 'unreadable') throw foreignFolderError(place.dir, found, owner);
    if (found.kind === 'owner') {
      const verdict = judgeOwner(found.owner, owner);
      if (verdict === 'foreign' || verdict === 'copy') throw foreignFolderError(place.dir, found, owner);
      if (verdict === 'moved' || verdict === 'renamed') {
        // Named where it is now, so a copy left at the old place is told apart from it.
        writeOwnerFile(place.dir, owner, { replace: true });
        logger.info(
          { dir: place.dir, from: found.owner.file?.path, to: owner.file?.path },
          'media folder: its database was moved; the owner file now names it where it is',
        );
      }
      return { kind: 'owned', owner };
    }
    const named = place.ownDir !== undefined && resolve(place.ownDir) === resolve(place.dir);
    const files = new MediaStore(place.dir);
    // One listing of the folder: an empty one needs no read of the kept files.
    const names = named ? [] : files.objectNames();
    if (names.length > 0) {
      const live = await deps.live();
      const unreferenced = names.filter((sha) => !live.has(sha)).length;
      if (unreferenced > 0) return { kind: 'shared', unreferenced };
    }
    if (named && place.legacyDir !== undefined) {
      await linkLegacyFiles(files, place.legacyDir, await deps.live(), logger);
    }
    if (writeOwnerFile(place.dir, owner, { replace: false })) {
      logger.info(
        { dir: place.dir, mirrorId: owner.mirrorId, db: owner.database },
        'media folder claimed for this database',
      );
      return { kind: 'owned', owner };
    }
  }
  throw foreignFolderError(place.dir, readOwnerFile(place.dir), owner);
}

/** What a claim reads of the store: who this database is, and the files it keeps. */
export type ClaimStore = Pick<Store, 'identityValue' | 'file' | 'readerTarget' | 'liveMediaObjects'>;

/** `claimMediaFolder` for `store`: its owner and its kept files read from it. */
export async function claimFolderFor(
  place: FolderPlace,
  store: ClaimStore,
  logger: Logger,
): Promise<FolderClaim> {
  const owner = await folderOwnerOf(store);
  return claimMediaFolder(place, { owner, live: () => store.liveMediaObjects(), logger });
}

/**
 * Links (or copies, across file systems) into the database's own folder every file it references
 * that the legacy folder holds and its own lacks. Linked, never moved: another database that shared
 * the legacy folder keeps its files there, and a file another database also references stays whole.
 */
async function linkLegacyFiles(
  files: MediaStore,
  legacyDir: string,
  live: ReadonlySet<string>,
  logger: Logger,
): Promise<void> {
  const legacy = new MediaStore(legacyDir);
  if (resolve(legacyDir) === resolve(files.dir) || !legacy.holdsObjects()) return;
  const counts = { linked: 0, copied: 0, unreadable: 0 };
  for (const sha of live) {
    const source = legacy.pathOf(sha);
    if (files.has(sha) || !existsSync(source)) continue;
    const how = await files.adopt(source, sha);
    counts[how] += 1;
  }
  await files.flushDirectories();
  if (counts.linked + counts.copied + counts.unreadable === 0) return;
  logger.info(
    { from: legacyDir, to: files.dir, ...counts },
    "media folder: this database's files linked in from the folder databases shared before",
  );
}

/**
 * Claims the media folder when a command starts (`start`, `serve`), so a folder of another database
 * stops it at once (MEDIA_DIR_FOREIGN, exit 2) and this database's files are linked in from the
 * legacy folder before anything is served. A shared folder is said once.
 */
export async function claimAtStart(
  place: FolderPlace,
  store: ClaimStore,
  logger: Logger,
): Promise<FolderClaim> {
  const claim = await claimFolderFor(place, store, logger);
  if (claim.kind === 'shared') logSharedFolder(place.dir, claim.unreferenced, logger);
  return claim;
}

/** A refusal is an event: said at start and once per run, what is not deleted and where the fix is. */
export function logSharedFolder(dir: string, unreferenced: number, logger: Logger): void {
  logger.warn(
    { dir, unreferenced },
    'media folder has no owner file and holds files this database does not reference: another database ' +
      'may use it, so nothing in it is deleted (leftovers of killed runs, MEDIA_RETENTION drops). ' +
      'Give each database a folder of its own: see MEDIA_DIR in docs/media.md',
  );
}

/**
 * Throws MEDIA_DIR_FOREIGN when the owner file of `dir` names another database (or cannot be
 * read); writes nothing. What `sync` asks before it starts a run.
 */
export async function refuseForeignFolder(dir: string, store: ClaimStore): Promise<void> {
  const found = readOwnerFile(dir);
  if (found.kind === 'none') return;
  const owner = await folderOwnerOf(store);
  const verdict = found.kind === 'owner' ? judgeOwner(found.owner, owner) : 'foreign';
  if (verdict !== 'foreign' && verdict !== 'copy') return;
  throw foreignFolderError(dir, found, owner);
}
