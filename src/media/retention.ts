import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { FolderClaim } from './claim-folder.js';
import { deleteDroppedCopies } from './drop-files.js';
import type { MediaSettings } from './settings.js';

/**
 * MEDIA_RETENTION: drops files that no media version valid within the window references. A version
 * still open is what the current snapshot serves, so it is never dropped. Rows are marked first,
 * files deleted after the commit: a crash in between leaves files no live row vouches for, which
 * the next run's collection removes. In a folder this database does not own (`folder`, as the run
 * claimed it) the files stay: the same bytes may be another database's. Its failure is logged,
 * never the run's.
 */
export async function applyMediaRetention(
  store: Store,
  settings: MediaSettings,
  folder: FolderClaim,
  logger: Logger,
): Promise<string[]> {
  if (settings.retentionMs === null) return [];
  const cutoff = new Date(Date.now() - settings.retentionMs).toISOString();
  try {
    const dropped = await store.dropMediaUnusedSince(cutoff);
    if (dropped.length === 0) return dropped;
    deleteDroppedCopies(settings.dir, folder, dropped);
    logger.info(
      { dropped: dropped.length, cutoff, filesKept: folder.kind === 'shared' },
      'media retention dropped files',
    );
    return dropped;
  } catch (err) {
    logger.error({ err }, 'media retention failed; files kept until the next run');
    return [];
  }
}
