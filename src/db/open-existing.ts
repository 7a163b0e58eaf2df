import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { MirrorError } from '../errors.js';
import { schemaStanding } from './migrate.js';
import { openDatabase, type MirrorDatabase, type OpenOptions } from './open.js';
import { mayWrite, readOnlyOnDisk } from './sqlite/on-disk.js';

/**
 * Opens the database of a read command (`runs`, `history`, `changes`, `serve`): it must exist (a
 * mistyped --db must not create an empty one that then answers "no runs yet"), and a read-only file
 * or folder is opened read-only instead of failing on the first write.
 */
export function openExistingDatabase(
  file: string,
  options: Pick<OpenOptions, 'busyTimeoutMs'> = {},
): MirrorDatabase {
  if (!existsSync(file)) {
    throw new MirrorError(
      'DB_NOT_FOUND',
      `no database at ${file}; nothing was created. Check --db (or DATABASE_PATH), or run a sync first`,
      { file },
    );
  }
  if (!readOnlyOnDisk(file)) return openDatabase(file, options);
  // A WAL database is read through its -shm file; where that is missing and the folder cannot be
  // written (a read-only mount), SQLite can only read the file as immutable.
  const immutable = !mayWrite(dirname(file)) && !existsSync(`${file}-shm`);
  const store = openDatabase(file, { ...options, readonly: true, migrate: false, immutable });
  if (schemaStanding(store.sqlite).pending > 0) {
    store.close();
    throw new MirrorError(
      'DB_ERROR',
      `database ${file} is read-only and was written by an older version: it needs an upgrade this ` +
        'process cannot write. Open it once with write access (any command migrates it)',
      { file },
    );
  }
  return store;
}
