import type pg from 'pg';
import { defaultDeadlines } from '../../config/database-deadlines.js';
import type { PostgresTarget } from '../../config/database-url.js';
import { MirrorError } from '../../errors.js';
import { ADVISORY_NAMESPACE, RUN_LOCK } from './advisory-keys.js';
import { connectionError, timeoutError } from './errors.js';
import { ownClient } from './open.js';
import { endClient, sessionBounds, type SessionBounds } from './session-bounds.js';
import type { Queryable } from './sql.js';
import { pgSqlPort } from './sql-port.js';

// The sync lock across instances sharing one PostgreSQL database: a session-level advisory lock on a
// connection of its own, freed the moment the holder's session ends (process killed, connection
// lost), its holder read from pg_locks and pg_stat_activity; no pid or heartbeat to judge, as SQLite's.

/** The instance holding the run lock, as pg_stat_activity shows its session. */
export interface RunLockHolder {
  /** The holder's application_name (`coworker-mirror <host>/<pid>/<random>`). */
  applicationName: string;
  /** The server process of the holder's session (pg_terminate_backend frees the lock). */
  backendPid: number;
  /** The holder's address, or null over a unix socket. */
  clientAddress: string | null;
  /** When the holder's lock session connected: the lock was taken just after. */
  since: string;
}

export interface HeldRunLock {
  /** Aborted (with a DB_ERROR as reason) when the lock's connection is lost: the lock is gone too. */
  readonly lost: AbortSignal;
  /** Frees the lock and closes its connection. */
  release(): Promise<void>;
}

const HOLDER_QUERY = `
  select a.application_name, a.pid, host(a.client_addr) as client_addr, a.backend_start
  from pg_locks l join pg_stat_activity a on a.pid = l.pid
  where l.locktype = 'advisory' and l.granted
    and l.database = (select oid from pg_database where datname = current_database())
    and l.classid = ?::bigint::oid and l.objid = ?::bigint::oid and l.objsubid = 2`;

/** Who holds the run lock on this database, or null when nobody does. */
export async function runLockHolder(db: Queryable): Promise<RunLockHolder | null> {
  type Row = [string | null, number, string | null, Date | null];
  const [row] = await pgSqlPort(db).rows<Row>(HOLDER_QUERY, [ADVISORY_NAMESPACE, RUN_LOCK]);
  if (row === undefined) return null;
  const [name, backendPid, clientAddress, since] = row;
  return { applicationName: name ?? '', backendPid, clientAddress, since: since?.toISOString() ?? '' };
}

function lockedError(holder: RunLockHolder | null, label: string): MirrorError {
  const who =
    holder === null
      ? 'an instance that released it a moment ago'
      : `${holder.applicationName || 'another session'} (backend pid ${holder.backendPid}` +
        `${holder.clientAddress ? ` from ${holder.clientAddress}` : ''}, since ${holder.since})`;
  return new MirrorError('SYNC_LOCKED', `another sync holds the lock on ${label}: ${who}`, {
    database: label,
    holder,
  });
}

/** `ownClient`, connected: a failure to connect is a DB_ERROR saying what to check. */
export async function connectOwnClient(
  target: PostgresTarget,
  instanceId: string,
  bounds: SessionBounds,
): Promise<pg.Client> {
  const client = ownClient(target, instanceId, bounds);
  try {
    await client.connect();
  } catch (cause) {
    throw connectionError(cause, target);
  }
  return client;
}

/**
 * Takes the run lock without waiting, or throws SYNC_LOCKED naming the instance that holds it.
 * The lock lives on a connection of its own, outside the pool, for as long as the run.
 */
export async function takeRunLock(
  target: PostgresTarget,
  instanceId: string,
  bounds: SessionBounds = sessionBounds('sync', defaultDeadlines()),
): Promise<HeldRunLock> {
  const client = await connectOwnClient(target, instanceId, bounds);
  const lost = new AbortController();
  let released = false;
  const onLost = (cause?: unknown) => {
    if (!released && !lost.signal.aborted) {
      const failed = `lost the connection holding the run lock on ${target.label}`;
      lost.abort(connectionError(cause ?? new Error('the connection ended'), target, failed));
    }
  };
  client.on('error', onLost);
  client.on('end', () => onLost());
  try {
    const [taken] = await pgSqlPort(client).values('select pg_try_advisory_lock(?, ?)', [
      ADVISORY_NAMESPACE,
      RUN_LOCK,
    ]);
    if (taken !== true) throw lockedError(await runLockHolder(client), target.label);
  } catch (cause) {
    released = true;
    await endClient(client);
    // A MirrorError (the refusal above) is handed on as it is by both.
    throw timeoutError(cause, target, bounds) ?? connectionError(cause, target);
  }
  return {
    lost: lost.signal,
    release: async () => {
      if (released) return;
      released = true;
      // Closing the session frees its advisory locks: no unlock round trip that could fail alone.
      // A server that does not answer frees them when it sees the socket gone.
      await endClient(client);
    },
  };
}
