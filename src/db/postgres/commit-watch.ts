import type pg from 'pg';
import type { PostgresTarget } from '../../config/database-url.js';
import type { CommitWatchOptions } from '../store.js';
import { connectionError } from './errors.js';
import { ownClient } from './open.js';
import type { Queryable } from './sql.js';

// Commits seen across instances: a run's commit sends NOTIFY on this channel inside its own
// transaction, so PostgreSQL delivers it to every listener exactly when the commit is visible (and
// never for a rolled-back run). Each watcher listens on a connection of its own, outside the pool:
// LISTEN belongs to a session, and a pooled connection is handed to other queries.

/** The channel commits are announced on; the payload is the committed run's id, `outbox` or `media`. */
export const COMMIT_CHANNEL = 'coworker_mirror_commits';

/** First and longest wait before listening again after the connection was lost. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * Announces to every instance: a run's commit (its id; call inside the commit's transaction), a
 * write to an outbox made outside a run (`outbox`: a redelivery, an endpoint enabled again, a lease
 * handed back; the workers look again at once), or files retention dropped (`media`: every
 * instance deletes its cached copies). Outside a run's commit, call after the write committed.
 */
export async function announce(db: Queryable, what: number | 'outbox' | 'media'): Promise<void> {
  await db.query('select pg_notify($1, $2)', [COMMIT_CHANNEL, String(what)]);
}

interface Listener {
  client: pg.Client;
  gone: boolean;
}

/**
 * Calls `onCommit` for every commit any instance announces, and once each time listening (re)starts,
 * for whatever was committed while nobody listened. A lost connection is reported to `onError` and
 * listening resumes after a growing wait (at most 5 s). Returns the stop.
 */
export function watchPostgresCommits(
  target: PostgresTarget,
  instanceId: string,
  onCommit: () => void,
  options: Pick<CommitWatchOptions, 'onError'>,
): () => void {
  let stopped = false;
  let listener: Listener | null = null;
  let timer: NodeJS.Timeout | null = null;
  let retryMs = RETRY_FIRST_MS;

  const lost = (own: Listener, cause: unknown) => {
    if (own.gone) return;
    own.gone = true;
    if (listener === own) listener = null;
    own.client.end().catch(() => undefined);
    if (stopped) return;
    options.onError?.(connectionError(cause, target, `lost the commit listener on ${target.label}`));
    timer = setTimeout(listen, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  const listen = () => {
    timer = null;
    const own: Listener = { gone: false, client: ownClient(target, instanceId, null) };
    listener = own;
    own.client.on('notification', () => onCommit());
    own.client.on('error', (error) => lost(own, error));
    own.client.on('end', () => lost(own, new Error('Connection terminated')));
    own.client
      .connect()
      .then(() => own.client.query(`listen ${COMMIT_CHANNEL}`))
      .then(() => {
        if (own.gone || stopped) return;
        retryMs = RETRY_FIRST_MS;
        onCommit();
      })
      .catch((error: unknown) => lost(own, error));
  };

  listen();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const own = listener;
    listener = null;
    if (own && !own.gone) {
      own.gone = true;
      own.client.end().catch(() => undefined);
    }
  };
}

interface Watcher {
  onCommit: () => void;
  onError: ((error: unknown) => void) | undefined;
}

/**
 * Every watcher of one store on ONE listening connection: the snapshot holder, the webhook and
 * notification workers and the media sweep each watch, and a connection apiece outside the pool
 * was four sessions per instance that DATABASE_POOL_MAX did not count. A watcher that joins a
 * listening connection gets its first call at once, as a watch of its own would.
 */
export class SharedCommitWatch {
  readonly #watchers = new Set<Watcher>();
  #stop: (() => void) | null = null;
  #listening = false;

  constructor(
    private readonly target: PostgresTarget,
    private readonly instanceId: string,
  ) {}

  watch(onCommit: () => void, options: Pick<CommitWatchOptions, 'onError'>): () => void {
    const watcher: Watcher = { onCommit, onError: options.onError };
    this.#watchers.add(watcher);
    if (this.#stop === null) {
      this.#stop = watchPostgresCommits(
        this.target,
        this.instanceId,
        () => {
          this.#listening = true;
          this.#each((w) => w.onCommit());
        },
        {
          onError: (error) => {
            this.#listening = false;
            this.#each((w) => w.onError?.(error));
          },
        },
      );
    } else if (this.#listening) {
      queueMicrotask(() => {
        if (this.#watchers.has(watcher)) onCommit();
      });
    }
    return () => {
      if (!this.#watchers.delete(watcher) || this.#watchers.size > 0) return;
      this.#stop?.();
      this.#stop = null;
      this.#listening = false;
    };
  }

  /** One watcher's throw must not keep the others from hearing of the commit. */
  #each(call: (watcher: Watcher) => void): void {
    for (const watcher of [...this.#watchers]) {
      try {
        call(watcher);
      } catch (error) {
        watcher.onError?.(error);
      }
    }
  }
}
