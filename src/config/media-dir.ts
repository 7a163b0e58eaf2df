import { basename, dirname, join } from 'node:path';
import type { DatabaseTarget } from './database-url.js';
import { settings } from './setting-table.js';

/** Characters kept in a folder named after a PostgreSQL database; any other becomes `_`. */
const UNSAFE_IN_NAME = /[^A-Za-z0-9._@-]/g;

export interface MediaFolder {
  /** The folder used: MEDIA_DIR, else `ownDir`. */
  dir: string;
  /** The folder named after the database: `<file>.media` beside a SQLite file, `./data/<database>@<host>-<port>.media`. */
  ownDir: string;
  /**
   * The folder every database used by default before each had its own (`media/` beside the SQLite
   * file, `./data/media` with PostgreSQL): when `ownDir` is made, the files the database references
   * are linked in from there.
   */
  legacyDir: string;
}

/**
 * The media folder of a database: MEDIA_DIR when given, else the one named after the database, so
 * no two databases share a folder unless told to (with PostgreSQL the folder is a cache of the
 * bytes the database holds, in the folder the default SQLite file would be in).
 */
export function mediaFolderOf(target: DatabaseTarget, given: string | null): MediaFolder {
  const parent = target.kind === 'sqlite' ? dirname(target.path) : dirname(settings.database.path.default);
  const name =
    target.kind === 'sqlite'
      ? basename(target.path)
      : `${target.database}@${target.host}-${target.port}`.replace(UNSAFE_IN_NAME, '_');
  const ownDir = join(parent, `${name}.media`);
  return { dir: given ?? ownDir, ownDir, legacyDir: join(parent, 'media') };
}
