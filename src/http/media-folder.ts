import { statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What is wrong with the media folder, or null: the database records stored files (`hasStored`) and
 * the folder holding them is gone (moved or deleted under a running server). One stat; readiness
 * asks per probe and the pages per image, so neither keeps pointing at /media/ URLs that cannot answer.
 */
export function mediaFolderProblem(hasStored: boolean, dir: string): string | null {
  const objects = join(dir, 'objects');
  if (!hasStored) return null;
  if (statSync(objects, { throwIfNoEntry: false })?.isDirectory() === true) return null;
  return `media folder ${objects} is missing (moved or deleted?): mirrored files cannot be served`;
}
