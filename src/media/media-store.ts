import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { copyFile, link, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { makeFolder } from '../fs/make-folder.js';
import { assertOwnedBy, type FolderOwner } from './folder-owner.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

function isSha256(text: string): boolean {
  return SHA256_HEX.test(text);
}

/**
 * The content-addressed folder: `objects/ab/<sha256>` holds complete files only; `tmp/` holds
 * downloads in progress. A file reaches `objects/` by rename after fsync, and its directory is
 * fsynced too, so a committed row never names a missing or partial file, whatever instant a
 * SIGKILL or a power cut lands. Nothing in it is deleted unless its owner file names the database
 * asking (folder-owner.ts): a folder another database may use is never cleaned for this one.
 */
export class MediaStore {
  readonly dir: string;
  readonly #objects: string;
  readonly #tmp: string;
  /** Folders whose new entries are not yet fsynced; `flushDirectories` makes them durable. */
  readonly #dirty = new Set<string>();
  #tmpReady = false;

  constructor(dir: string) {
    this.dir = dir;
    this.#objects = join(dir, 'objects');
    this.#tmp = join(dir, 'tmp');
  }

  pathOf(sha256: string): string {
    return join(this.#objects, sha256.slice(0, 2), sha256);
  }

  has(sha256: string): boolean {
    return existsSync(this.pathOf(sha256));
  }

  /** Whether `objects/` holds any file (a folder in use, as against a new or empty one). */
  holdsObjects(): boolean {
    return this.#prefixes().some((prefix) => readdirSync(join(this.#objects, prefix)).length > 0);
  }

  /** The sha256 of every complete object in the folder. */
  objectNames(): string[] {
    return this.#prefixes().flatMap((prefix) =>
      readdirSync(join(this.#objects, prefix)).filter((name) => isSha256(name) && name.startsWith(prefix)),
    );
  }

  #prefixes(): string[] {
    if (!existsSync(this.#objects)) return [];
    return readdirSync(this.#objects, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  }

  /**
   * Puts the complete object at `source` (another media folder's) in place under its hash: a hard
   * link (no bytes written; the other folder keeps its own name for it), else a copy through a temp
   * file, fsynced, as a download lands. `unreadable` when the source cannot be read; a failure to
   * write here throws. Call `flushDirectories` after.
   */
  async adopt(source: string, sha256: string): Promise<'linked' | 'copied' | 'unreadable'> {
    const target = this.pathOf(sha256);
    const folder = join(this.#objects, sha256.slice(0, 2));
    if (!existsSync(folder)) {
      makeFolder(folder);
      this.#dirty.add(this.#objects);
    }
    this.#dirty.add(folder);
    try {
      await link(source, target);
      return 'linked';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return 'linked';
      if (code === 'ENOENT' || code === 'EACCES') return 'unreadable';
      // Another file system, or one without hard links: copy.
    }
    const temp = await this.createTemp();
    await temp.handle.close();
    try {
      await copyFile(source, temp.path);
    } catch (error) {
      await this.discardTemp(temp.path);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return 'unreadable';
      throw error;
    }
    const handle = await open(temp.path, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await this.commitTemp(temp.path, sha256);
    return 'copied';
  }

  /** A fresh temp file for one download. */
  async createTemp(): Promise<{ path: string; handle: FileHandle }> {
    if (!this.#tmpReady) makeFolder(this.#tmp);
    this.#tmpReady = true;
    const path = join(this.#tmp, `${randomBytes(12).toString('hex')}.part`);
    return { path, handle: await open(path, 'wx') };
  }

  /**
   * Moves a complete, fsynced temp file into place under its hash. When the object exists already
   * (the same bytes at another URL, or an earlier run), the temp file is dropped instead.
   * Returns whether a new object was written. Two downloads of the same bytes may race here: the
   * rename is atomic and both files hold the same bytes, so either outcome is the same object.
   */
  async commitTemp(tempPath: string, sha256: string): Promise<boolean> {
    const target = this.pathOf(sha256);
    if (existsSync(target)) {
      await unlink(tempPath);
      return false;
    }
    const folder = join(this.#objects, sha256.slice(0, 2));
    if (!existsSync(folder)) {
      makeFolder(folder);
      this.#dirty.add(this.#objects);
    }
    await rename(tempPath, target);
    // The rename is durable only once the directory entry is: see flushDirectories.
    this.#dirty.add(folder);
    return true;
  }

  /**
   * Fsyncs every folder a rename touched since the last call, once each. Call before committing any
   * row that names the files: only then do they survive a power cut.
   */
  async flushDirectories(): Promise<void> {
    const folders = [...this.#dirty];
    this.#dirty.clear();
    // At once: the file system's journal commits concurrent fsyncs together.
    await Promise.all(
      folders.map(async (folder) => {
        const handle = await open(folder, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      }),
    );
  }

  /** Removes a temp file of a failed download; absent is fine. */
  async discardTemp(tempPath: string): Promise<void> {
    await unlink(tempPath).catch(() => undefined);
  }

  /**
   * Deletes what a killed run left: every temp file, and every object `isLive` does not vouch for.
   * Call only while holding the run lock: a run in progress writes objects before its rows commit.
   * Throws MEDIA_DIR_FOREIGN, deleting nothing, unless the folder's owner file names `owner`.
   * Returns the names removed.
   */
  collectGarbage(
    isLive: (sha256: string) => boolean,
    owner: FolderOwner,
  ): { temps: number; objects: string[] } {
    assertOwnedBy(this.dir, owner);
    let temps = 0;
    if (existsSync(this.#tmp)) {
      for (const name of readdirSync(this.#tmp)) {
        rmSync(join(this.#tmp, name), { force: true, recursive: true });
        temps++;
      }
    }
    const objects: string[] = [];
    if (!existsSync(this.#objects)) return { temps, objects };
    for (const prefix of readdirSync(this.#objects)) {
      for (const name of readdirSync(join(this.#objects, prefix))) {
        if (isSha256(name) && name.startsWith(prefix) && isLive(name)) continue;
        rmSync(join(this.#objects, prefix, name), { force: true, recursive: true });
        objects.push(name);
      }
    }
    return { temps, objects };
  }

  /**
   * Deletes objects (retention's drops); absent is fine. Throws MEDIA_DIR_FOREIGN, deleting nothing,
   * unless the folder's owner file names `owner`.
   */
  remove(sha256s: readonly string[], owner: FolderOwner): void {
    if (sha256s.length === 0) return;
    assertOwnedBy(this.dir, owner);
    for (const sha256 of sha256s) {
      try {
        unlinkSync(this.pathOf(sha256));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  }
}
