import type pg from 'pg';
import type { DatabaseDeadlines } from '../../config/database-deadlines.js';
import { settings } from '../../config/setting-table.js';

// Every wait on PostgreSQL has an end, set per connection by what the connection is for: the server
// asks the database to give up (statement_timeout, lock_timeout) so the error says why, and the
// client gives up a moment later on a server that cannot answer at all (stopped, cut off).

/** What a connection is for, and so how long its waits may be. */
type SessionPurpose = 'read' | 'sync' | 'probe';

/** The bounds of one purpose's sessions, and the words and settings its timeouts are reported with. */
export interface SessionBounds {
  readonly purpose: SessionPurpose;
  /** Who waited, as a message says it: "a read", "the sync", "a health check". */
  readonly who: string;
  /** lock_timeout: how long a statement waits for a lock another session holds. */
  readonly lockTimeoutMs: number;
  readonly lockSetting: string;
  /** statement_timeout: how long one statement may run, its lock waits included. */
  readonly statementTimeoutMs: number;
  readonly statementSetting: string;
  /** How long the client waits for any answer before it drops the connection. */
  readonly answerTimeoutMs: number;
  /** The longest wait for a connection (a free one of the pool, or a new one); null: the URL's connect_timeout. */
  readonly connectTimeoutMs: number | null;
}

/**
 * The client waits this much longer than the server's own timeout, so a server that answers says
 * why it gave up; only one that cannot answer meets the client's bound.
 */
const ANSWER_GRACE_MS = 1000;

/**
 * The bounds of each purpose's sessions. A health check asks the server to give up well within its
 * deadline (a new connection may take some of it), a lock wait first, so the answer within the
 * deadline can say what held it.
 */
export function sessionBounds(purpose: SessionPurpose, deadlines: DatabaseDeadlines): SessionBounds {
  const names = settings.database;
  switch (purpose) {
    case 'read':
      return {
        purpose,
        who: 'a read',
        lockTimeoutMs: deadlines.readTimeoutMs,
        lockSetting: names.readTimeoutMs.env,
        statementTimeoutMs: deadlines.readTimeoutMs,
        statementSetting: names.readTimeoutMs.env,
        answerTimeoutMs: deadlines.readTimeoutMs + ANSWER_GRACE_MS,
        connectTimeoutMs: deadlines.readTimeoutMs,
      };
    case 'sync':
      return {
        purpose,
        who: 'the sync',
        lockTimeoutMs: deadlines.syncLockTimeoutMs,
        lockSetting: names.syncLockTimeoutMs.env,
        statementTimeoutMs: deadlines.syncStatementTimeoutMs,
        statementSetting: names.syncStatementTimeoutMs.env,
        answerTimeoutMs: deadlines.syncStatementTimeoutMs + ANSWER_GRACE_MS,
        connectTimeoutMs: null,
      };
    case 'probe': {
      const share = (part: number) => Math.max(1, Math.floor(deadlines.probeTimeoutMs * part));
      return {
        purpose,
        who: 'a health check',
        lockTimeoutMs: share(0.4),
        lockSetting: names.probeTimeoutMs.env,
        statementTimeoutMs: share(0.6),
        statementSetting: names.probeTimeoutMs.env,
        answerTimeoutMs: share(0.9),
        connectTimeoutMs: share(0.9),
      };
    }
  }
}

/**
 * The session's bounds as pg's connection settings. idle_in_transaction_session_timeout ends a
 * session of this process that stalls inside a transaction, so the locks it holds cannot outlive
 * the statement bound.
 */
export function sessionSettings(bounds: SessionBounds): pg.ClientConfig {
  return {
    statement_timeout: bounds.statementTimeoutMs,
    lock_timeout: bounds.lockTimeoutMs,
    idle_in_transaction_session_timeout: bounds.statementTimeoutMs,
    query_timeout: bounds.answerTimeoutMs,
  };
}

/**
 * Waits for `ending` (a client's or a pool's end) no longer than `ms`, then drops the sockets of
 * `clients`: a server that does not answer (stopped) never sees a connection off, and ends the
 * session, and frees its locks, only when it sees the socket gone.
 */
export async function endWithin(
  ending: Promise<unknown>,
  ms: number,
  clients: Iterable<pg.Client>,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    if ((await Promise.race([ending, late])) === 'late') {
      for (const client of clients) client.connection.stream.destroy();
    }
  } finally {
    clearTimeout(timer);
  }
}

/** Ends a connection; a goodbye needs nothing of the server, so a second is plenty. */
export const endClient = (client: pg.Client): Promise<void> =>
  endWithin(
    client.end().catch(() => undefined),
    1000,
    [client],
  );
