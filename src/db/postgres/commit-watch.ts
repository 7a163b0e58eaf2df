import type pg from 'pg';
import type { PostgresTarget } from '../../config/database-url.js';
import type { CommitWatchOptions } from '../store.js';
import { connectionError } from './errors.js';
import { ownClient } from './open.js';
import type { Queryable } from './sql.js';

// Commits seen across instances: a run's commit sends NOTIFY on this channel inside its own
// transaction, so PostgreSQL delivers it to every listener exactly when the commit is visible (and
// never for a rolled-back run). The watchers listen on a connection of their own, outside the pool:
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

interface Watcher {
  onCommit: () => void;
  onError: ((error: unknown) => void) | undefined;
}

/**
 * Every watcher of one store on ONE listening connection, opened at the first watch and closed
 * with the last: the snapshot holder, the webhook and notification workers and the media sweep
 * each watch, and a connection apiece outside the pool was four sessions per instance that
 * DATABASE_POOL_MAX did not count. Each watcher hears of every commit any instance announces, and
 * once each time listening (re)starts, for whatever was committed while nobody listened (one that
 * joins a listening connection, at once). A lost connection is reported to every `onError` and
 * listening resumes after a growing wait (at most 5 s).
 */
export class SharedCommitWatch {
  readonly #watchers = new Set<Watcher>();
  #listener: Listener | null = null;
  #listening = false;
  #timer: NodeJS.Timeout | null = null;
  #retryMs = RETRY_FIRST_MS;

  constructor(
    private readonly target: PostgresTarget,
    private readonly instanceId: string,
  ) {}

  watch(onCommit: () => void, options: Pick<CommitWatchOptions, 'onError'>): () => void {
    const watcher: Watcher = { onCommit, onError: options.onError };
    this.#watchers.add(watcher);
    if (this.#watchers.size === 1) this.#listen();
    else if (this.#listening) {
      queueMicrotask(() => {
        if (this.#watchers.has(watcher)) onCommit();
      });
    }
    return () => {
      if (this.#watchers.delete(watcher) && this.#watchers.size === 0) this.#stop();
    };
  }

  #listen(): void {
    this.#timer = null;
    const own: Listener = { gone: false, client: ownClient(this.target, this.instanceId, null) };
    this.#listener = own;
    own.client.on('notification', () => this.#committed());
    own.client.on('error', (error) => this.#lost(own, error));
    own.client.on('end', () => this.#lost(own, new Error('Connection terminated')));
    own.client
      .connect()
      .then(() => own.client.query(`listen ${COMMIT_CHANNEL}`))
      .then(() => {
        if (own.gone) return;
        this.#retryMs = RETRY_FIRST_MS;
        this.#committed();
      })
      .catch((error: unknown) => this.#lost(own, error));
  }

  #committed(): void {
    this.#listening = true;
    this.#each((w) => w.onCommit());
  }

  #lost(own: Listener, cause: unknown): void {
    // A stopped watch marked its listener gone: nothing to report, nothing to retry.
    if (own.gone) return;
    this.#close(own);
    this.#listening = false;
    const error = connectionError(cause, this.target, `lost the commit listener on ${this.target.label}`);
    this.#each((w) => w.onError?.(error));
    this.#timer = setTimeout(() => this.#listen(), this.#retryMs);
    this.#timer.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
  }

  #close(own: Listener): void {
    own.gone = true;
    if (this.#listener === own) this.#listener = null;
    own.client.end().catch(() => undefined);
  }

  #stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#listener && !this.#listener.gone) this.#close(this.#listener);
    this.#listening = false;
    this.#retryMs = RETRY_FIRST_MS;
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
