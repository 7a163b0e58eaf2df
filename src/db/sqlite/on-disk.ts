import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

// What the disk allows a SQLite file: one answer for the full open (open-existing.ts) and for the
// light reader of `runs` (run-reader.ts), which must not load the ORM to ask.

/** True when the file or its folder cannot (or, by its mode, should not) be written; the file must exist. */
export function readOnlyOnDisk(file: string): boolean {
  for (const path of [file, dirname(file)]) {
    // The mode bits count too: root may write anything, yet a file chmod'ed 0444 means "leave it".
    if ((statSync(path).mode & 0o222) === 0) return true;
    if (!mayWrite(path)) return true;
  }
  return false;
}

/** Whether this process may write `path`, a folder or a file. */
export function mayWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** An existing file this process may open to write, by the same rules as the full open. */
export function writableOnDisk(file: string): boolean {
  return existsSync(file) && !readOnlyOnDisk(file);
}
