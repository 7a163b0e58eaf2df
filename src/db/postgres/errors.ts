import type { PostgresTarget } from '../../config/database-url.js';
import { MirrorError } from '../../errors.js';
import { describeDuration } from '../../time/duration.js';
import type { SessionBounds } from './session-bounds.js';
import { SOCKET_CODES } from '../database-away.js';

/** Where the mirror was told to connect, as it may be shown: everything but the password. */
export type PostgresPlace = Omit<PostgresTarget, 'kind' | 'connectionString'>;

/** The code of a pg or socket error; for an AggregateError (every address of a name refused), the first inner one. */
function errorCode(cause: unknown): string | undefined {
  if (typeof cause !== 'object' || cause === null) return undefined;
  const { code, errors } = cause as { code?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  return Array.isArray(errors) ? errorCode(errors[0]) : undefined;
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

const TLS_VERIFY_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** One line saying what failed and what to check, by the failure's code (PostgreSQL SQLSTATE or errno). */
function advice(code: string | undefined, message: string, at: PostgresPlace): string {
  const where = `${at.host}:${at.port}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `nothing accepts connections at ${where}: check that PostgreSQL runs there and the host and port of DATABASE_URL`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host ${at.host} is not known: check the host of DATABASE_URL`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${where} cannot be reached: check the host and port of DATABASE_URL and any firewall between`;
    case 'ENOENT':
      return `there is no PostgreSQL socket in ${at.host}: check the host= folder of DATABASE_URL and that the server runs`;
    case '28P01':
      return `PostgreSQL refused the password of user "${at.user}": check the user and password of DATABASE_URL`;
    case '28000':
      return `PostgreSQL refused user "${at.user}" (${message}): check the user of DATABASE_URL and the server's pg_hba.conf`;
    case '3D000':
      return `the database "${at.database}" does not exist on ${where}: create it (createdb ${at.database}) or fix the database name in DATABASE_URL`;
    case '53300':
      return `PostgreSQL has no free connection slot: lower DATABASE_POOL_MAX or raise the server's max_connections`;
    case '57P01':
    case '57P02':
      return 'the server ended the session (pg_terminate_backend, or a shutdown or restart): run again';
    case '57P03':
      return 'PostgreSQL is starting up or shutting down: run again in a moment';
  }
  if (code !== undefined && TLS_VERIFY_CODES.has(code)) {
    return `the server's TLS certificate was not accepted (${code}): give its CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying`;
  }
  if (/does not support SSL/i.test(message)) {
    return 'the server does not accept TLS: enable ssl on the server, or set sslmode=disable in DATABASE_URL';
  }
  if (/timeout/i.test(message)) {
    return `no answer from ${where} within ${at.connectTimeoutMs / 1000} s: check the host and port of DATABASE_URL and any firewall between`;
  }
  return `check DATABASE_URL (${at.label}) and that the server accepts this client`;
}

/**
 * A failure to connect (or to stay connected) as a DB_ERROR (exit 8) with one line saying what to
 * check. The message names the masked URL, never the password; the pg error stays as `cause`.
 */
export function connectionError(
  cause: unknown,
  at: PostgresPlace,
  failed = `cannot connect to PostgreSQL at ${at.label}`,
): MirrorError {
  if (cause instanceof MirrorError) return cause;
  const code = errorCode(cause);
  const hint = advice(code, messageOf(cause), at);
  return new MirrorError(
    'DB_ERROR',
    `${failed}: ${hint}`,
    { database: at.label, host: at.host, port: at.port, code: code ?? null, advice: hint },
    { cause },
  );
}

/** SQLSTATE classes of a session that failed or ended, rather than of a statement it ran. */
const CONNECTION_CLASSES = ['08', '57', '53'];
/** What pg says when a connection ends or cannot be had, without a code. */
const CONNECTION_MESSAGE =
  /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection refused/i;

/** Which bound a wait passed, by what PostgreSQL or pg said. */
type PassedBound = 'lock' | 'statement' | 'idle' | 'answer' | 'connection';

function passedBound(code: string | undefined, message: string): PassedBound | null {
  if (code === '55P03') return 'lock';
  // 57014 is also a cancel asked for by hand (pg_cancel_backend): that is no timeout.
  if (code === '57014' && /statement timeout/i.test(message)) return 'statement';
  if (code === '25P03') return 'idle';
  if (/^Query read timeout$/.test(message)) return 'answer';
  if (/^timeout exceeded when trying to connect$/.test(message)) return 'connection';
  return null;
}

/** What a person does about each bound passed: who holds the lock, or whether the server runs. */
function timeoutSentence(bound: PassedBound, bounds: SessionBounds, at: PostgresPlace, ms: number): string {
  const where = `PostgreSQL at ${at.label}`;
  const { who } = bounds;
  const within = `${describeDuration(ms)} (${bound === 'lock' ? bounds.lockSetting : bounds.statementSetting})`;
  const holder =
    'pg_locks and pg_stat_activity name the session holding it, pg_terminate_backend(pid) ends it';
  // A health check's deadline is the load balancer's business, not a thing to raise for the database.
  const raise = (setting: string) => (bounds.purpose === 'probe' ? '' : `; or raise ${setting}`);
  const isItUp = `check that the server runs and is neither stopped nor overloaded (pg_isready -h ${at.host} -p ${at.port})`;
  switch (bound) {
    case 'lock':
      return `${who} waited more than ${within} for a lock another session holds on ${where}: ${holder}${raise(bounds.lockSetting)}`;
    case 'statement':
      return (
        `a statement of ${who} ran past ${within} on ${where}, which cancelled it: another session may hold a ` +
        `lock it needs (${holder}), or the server is overloaded${raise(bounds.statementSetting)}`
      );
    case 'idle':
      return `a session of ${who} sat inside a transaction for more than ${within} and ${where} ended it: this process stalled; run again`;
    case 'answer':
      return `${where} did not answer ${who} within ${within}: ${isItUp}`;
    case 'connection':
      return (
        `${who} got no connection to ${where} within ${describeDuration(ms)}: ` +
        `every one of the DATABASE_POOL_MAX connections is busy, or the server does not answer; ${isItUp}`
      );
  }
}

/**
 * A wait on PostgreSQL that passed its bound, as DATABASE_TIMEOUT (exit 9) with a sentence saying
 * which bound, what held it and what to do; null when `cause` is no such wait.
 */
export function timeoutError(cause: unknown, at: PostgresPlace, bounds: SessionBounds): MirrorError | null {
  if (cause instanceof MirrorError) return cause.code === 'DATABASE_TIMEOUT' ? cause : null;
  const bound = passedBound(errorCode(cause), messageOf(cause));
  if (bound === null) return null;
  const timeoutMs =
    bound === 'lock'
      ? bounds.lockTimeoutMs
      : bound === 'answer'
        ? bounds.answerTimeoutMs
        : bound === 'connection'
          ? (bounds.connectTimeoutMs ?? at.connectTimeoutMs)
          : bounds.statementTimeoutMs;
  return new MirrorError(
    'DATABASE_TIMEOUT',
    timeoutSentence(bound, bounds, at, timeoutMs),
    {
      database: at.label,
      waited: bound,
      timeoutMs,
      setting: bound === 'lock' ? bounds.lockSetting : bounds.statementSetting,
    },
    { cause },
  );
}

/**
 * A failure of a store operation, as callers branch on it: a wait past its bound is a
 * DATABASE_TIMEOUT saying which and what to do; a lost or refused connection is a DB_ERROR saying
 * what to check (as at open); another PostgreSQL error is a DB_ERROR naming its SQLSTATE; anything
 * else (a MirrorError, a bug) is handed on as it is. Messages name the masked URL, never the password.
 */
export function operationError(cause: unknown, at: PostgresPlace, bounds: SessionBounds): unknown {
  if (cause instanceof MirrorError) return cause;
  const timeout = timeoutError(cause, at, bounds);
  if (timeout !== null) return timeout;
  const code = errorCode(cause);
  const message = messageOf(cause);
  const sqlState = code !== undefined && /^[0-9A-Z]{5}$/.test(code);
  const lost =
    (sqlState && CONNECTION_CLASSES.includes(code.slice(0, 2))) ||
    (code !== undefined && SOCKET_CODES.has(code)) ||
    CONNECTION_MESSAGE.test(message);
  if (lost) return connectionError(cause, at, `lost PostgreSQL at ${at.label}`);
  if (!sqlState) return cause;
  return new MirrorError(
    'DB_ERROR',
    `database error (${code}) on ${at.label}: ${message}`,
    { database: at.label, code },
    { cause },
  );
}
