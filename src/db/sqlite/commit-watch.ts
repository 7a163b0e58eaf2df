import type { SqliteHandle } from './handle.js';
import type { CommitWatchOptions } from '../store.js';

/**
 * SQLite cannot tell a connection of another process's commit: polls the commit token every
 * `pollMs` (two reads of the connection's own counters, no table read) and calls `onCommit` when
 * it moved, and once at the start. The token changes with every commit on the file: `data_version`
 * moves when another connection commits, `total_changes()` when this one does.
 */
export function watchSqliteCommits(
  store: SqliteHandle,
  onCommit: () => void,
  options: CommitWatchOptions,
): () => void {
  let seen: string | null = null;
  const look = () => {
    let token: string;
    try {
      const other = store.sqlite.pragma('data_version', { simple: true }) as number;
      const own = store.sqlite.prepare('select total_changes()').pluck().get() as number;
      token = `${other}:${own}`;
    } catch (error) {
      options.onError?.(error);
      return;
    }
    if (token === seen) return;
    seen = token;
    onCommit();
  };
  look();
  const timer = setInterval(look, options.pollMs);
  timer.unref();
  return () => clearInterval(timer);
}
