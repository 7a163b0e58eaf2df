import type { FolderClaim } from './claim-folder.js';
import { MediaStore } from './media-store.js';

/** What became of the folder's copies of files the database dropped. */
export interface DroppedCopies {
  /** Deleted from the folder. */
  deleted: number;
  /** Left in the folder: it is not proven this database's. */
  kept: number;
}

/**
 * Deletes the folder's copies of files the database no longer references, only from a folder
 * proven this database's (`folder` as it was claimed; MediaStore.remove asks the owner file once
 * more right before). In a shared folder the same bytes may be another database's, so they stay.
 */
export function deleteDroppedCopies(
  dir: string,
  folder: FolderClaim,
  dropped: readonly string[],
): DroppedCopies {
  if (dropped.length === 0) return { deleted: 0, kept: 0 };
  const store = new MediaStore(dir);
  const present = dropped.filter((sha) => store.has(sha));
  if (folder.kind === 'shared') return { deleted: 0, kept: present.length };
  store.remove(present, folder.owner);
  return { deleted: present.length, kept: 0 };
}
