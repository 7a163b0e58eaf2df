import type { SqliteHandle } from './handle.js';
import type { CommitWatchOptions } from '../store.js';

/**
 * What has been committed on this file so far, as a token that changes with every commit:
 * `data_version` moves when another connection commits, `total_changes()` when this one does.
 */
function commitToken(store: SqliteHandle): string {
  const other = store.sqlite.pragma('data_version', { simple: true }) as number;
  const own = store.sqlite.prepare('select total_changes()').pluck().get() as number;
  return `${other}:${own}`;
}

/**
 * SQLite cannot tell a connection of another process's commit: polls the commit token every
 * `pollMs` (two reads of the connection's own counters, no table read) and calls `onCommit` when
 * it moved, and once at the start.
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
      token = commitToken(store);
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
