import { deadlinesOf, type DatabaseDeadlines } from '../config/database-deadlines.js';
import type { DatabaseTarget } from '../config/database-url.js';
import { maskPassword } from '../config/database-url.js';
import { MirrorError } from '../errors.js';
import type { Logger } from '../logger.js';
import { openDatabase, openExistingDatabase } from './open.js';
import type { NotificationRows } from './notify-outbox.js';
import { PortStore } from './port-store.js';
import type { Store } from './store.js';

/** A store this process opened: its operations, and the close that ends its connections. */
export type OpenedStore = Store & { close(): void | Promise<void> };

/** The database settings a store is opened from (`config.database`); a deadline not given is its default. */
export interface StoreChoice extends Partial<DatabaseDeadlines> {
  target: DatabaseTarget;
  poolMax: number;
}

/**
 * What the process does with its store, and so how long its waits may be: a `server` answers
 * health checks (on SQLite it then waits no longer than DATABASE_PROBE_TIMEOUT for another process's
 * write lock, since better-sqlite3 waits on the event loop); a `sync` waits for locks and long
 * statements as DATABASE_SYNC_LOCK_TIMEOUT and DATABASE_SYNC_STATEMENT_TIMEOUT allow; a `command`
 * reads as a server does.
 */
export type StorePurpose = 'server' | 'sync' | 'command';

export interface OpenStoreOptions {
  /** `command` unless told. */
  purpose?: StorePurpose;
  /**
   * A read command's open: a SQLite file must already exist (a mistyped --db creates nothing) and a
   * read-only one is opened read-only. PostgreSQL always exists where it is told to be.
   */
  existing?: boolean;
  /** Names this process to the other instances (PostgreSQL's application_name). */
  instanceId?: string;
  /** Where PostgreSQL's open says what it did (migrations applied, or waited for). */
  logger?: Logger;
}

/**
 * The one way every command opens its store: SQLite (migrated, as `openDatabase`) or PostgreSQL
 * (a bounded pool, migrated once across instances). A failure is a MirrorError whose message
 * names what to check and never the password: DB_ERROR (exit 8) when the database cannot be reached.
 */
export async function openStore(choice: StoreChoice, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  const { target } = choice;
  const purpose = options.purpose ?? 'command';
  if (target.kind === 'sqlite') {
    const sqlite =
      purpose === 'server' ? { busyTimeoutMs: deadlinesOf(choice).probeTimeoutMs } : ({} as const);
    return options.existing === true
      ? openExistingDatabase(target.path, sqlite)
      : openDatabase(target.path, sqlite);
  }
  try {
    // The PostgreSQL driver and its ORM dialect load only for a PostgreSQL database: a SQLite
    // command (`runs`, a cron `sync`) never pays for them.
    const { openPgStore } = await import('./postgres/store.js');
    return await openPgStore(target, {
      poolMax: choice.poolMax,
      purpose: purpose === 'sync' ? 'sync' : 'read',
      deadlines: deadlinesOf(choice),
      ...(options.instanceId !== undefined ? { instanceId: options.instanceId } : {}),
      ...(options.logger !== undefined ? { logger: options.logger } : {}),
    });
  } catch (cause) {
    throw maskedError(cause, target.label);
  }
}

/** The error with any password in its message masked; anything not a MirrorError becomes DB_ERROR. */
function maskedError(cause: unknown, label: string): MirrorError {
  if (cause instanceof MirrorError) {
    const message = maskPassword(cause.message);
    return message === cause.message
      ? cause
      : new MirrorError(cause.code, message, cause.details, { cause: cause.cause });
  }
  const text = maskPassword(cause instanceof Error ? cause.message : String(cause));
  return new MirrorError(
    'DB_ERROR',
    `cannot open database ${label}: ${text}; check DATABASE_URL and that PostgreSQL runs`,
    { database: label },
  );
}

/** The notification rows of a store's outbox, for the notification worker (`outboxOver`). */
export function notificationRowsOf(store: Store): NotificationRows | null {
  return store instanceof PortStore ? store.notificationOutbox() : null;
}
