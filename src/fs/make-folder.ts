import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Why a folder could not be made, in words that name the path at fault. */
export class FolderError extends Error {
  readonly path: string;
  constructor(message: string, path: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FolderError';
    this.path = path;
  }
}

function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The missing folders of `path`, outermost first, after checking that what exists is a folder. */
function missingFolders(path: string): string[] {
  const missing: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    try {
      if (statSync(at).isDirectory()) return missing.reverse();
      throw new FolderError(`${at} is a file, not a folder`, at);
    } catch (error) {
      if (error instanceof FolderError) throw error;
      const code = errnoCode(error);
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(at) === at) {
        throw new FolderError(`cannot look at ${at}: ${(error as Error).message}`, at, { cause: error });
      }
      missing.push(at);
    }
  }
}

/**
 * `mkdir -p` one level at a time. Node's recursive mkdir retries forever where the kernel answers
 * ENOENT to a mkdir whose parent exists (`/proc/nope`: 100 % CPU, no error), and says `EEXIST` where
 * a parent is a regular file; here each folder is made once, and a failure names its path.
 */
export function makeFolder(path: string, mode?: number): void {
  for (const folder of missingFolders(path)) {
    try {
      mkdirSync(folder, mode === undefined ? {} : { mode });
    } catch (error) {
      // Made meanwhile by another process: what was wanted.
      if (errnoCode(error) === 'EEXIST' && statSync(folder, { throwIfNoEntry: false })?.isDirectory())
        continue;
      throw new FolderError(`cannot create folder ${folder}: ${(error as Error).message}`, folder, {
        cause: error,
      });
    }
  }
}
