import { isLosslessNumber } from 'lossless-json';

/**
 * The closed set of failures coworker-mirror reports. Callers branch on `code`, never on message
 * text; `cli.ts` maps codes to exit codes and the HTTP layer maps them to statuses.
 */
export const errorCodes = [
  // configuration and usage
  'CONFIG_INVALID',
  'DB_NOT_FOUND',
  'DB_TOO_NEW',
  'UPSTREAM_MISMATCH',
  // a media folder whose owner file names another database
  'MEDIA_DIR_FOREIGN',
  // upstream transport
  'UPSTREAM_NETWORK',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_HTTP_STATUS',
  'UPSTREAM_BODY_TOO_LARGE',
  'UPSTREAM_INVALID_JSON',
  // upstream content
  'UPSTREAM_SCHEMA',
  'UPSTREAM_PAGINATION',
  'UPSTREAM_FOREIGN_NEXT',
  'UPSTREAM_PAGE_LOOP',
  'UPSTREAM_TOO_MANY_PAGES',
  'UPSTREAM_LISTING_TOO_LARGE',
  'UPSTREAM_INCONSISTENT',
  'UPSTREAM_UNSTABLE_ORDER',
  'EMPTY_LISTING_UNCONFIRMED',
  'LARGE_DROP_UNCONFIRMED',
  // a run's own bounds: its total deadline passed, or its isolated process died
  'SYNC_TIMEOUT',
  'SYNC_CRASHED',
  // store
  'SYNC_LOCKED',
  'DB_ERROR',
  'RUN_ABORTED',
  'NOT_FOUND',
  // a name given to find one coworker that more than one coworker has
  'NAME_AMBIGUOUS',
  // serving
  'SNAPSHOT_INVALID',
  // a bug: anything thrown that is not one of the above
  'UNEXPECTED',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export type ErrorDetails = Record<string, unknown>;

export class MirrorError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MirrorError';
    this.code = code;
    this.details = details;
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** A bad environment variable or flag: names every offender and the fix. */
export class ConfigError extends MirrorError {
  readonly issues: readonly { name: string; problem: string }[];
  constructor(issues: readonly { name: string; problem: string }[]) {
    super(
      'CONFIG_INVALID',
      `invalid configuration:\n${issues.map((i) => `  ${i.name}: ${i.problem}`).join('\n')}`,
      { issues },
    );
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

export function isMirrorError(value: unknown): value is MirrorError {
  return value instanceof MirrorError;
}

/** What to do about a database error, by SQLite's primary result code. */
const DB_ADVICE: Record<string, string> = {
  SQLITE_READONLY: 'make the database file, its -wal/-shm files and its folder writable by this user',
  SQLITE_CANTOPEN: 'check that the folder of DATABASE_PATH exists and is writable by this user',
  SQLITE_PERM: 'make the database file and its folder writable by this user',
  SQLITE_CORRUPT: 'the file is damaged: stop every process using it and restore it from a backup',
  SQLITE_NOTADB:
    'the file is not a SQLite database: point DATABASE_PATH at the mirror database or restore a backup',
  SQLITE_FULL: 'the disk is full: free space, then run again',
  SQLITE_IOERR: 'the disk failed a read or write: check the disk and free space, then run again',
  SQLITE_BUSY: 'another process held a write for too long: run again',
  SQLITE_LOCKED: 'another connection held a lock: run again',
};

function sqliteCode(value: unknown): string | null {
  if (!(value instanceof Error) || value.name !== 'SqliteError') return null;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'SQLITE_ERROR';
}

/** The advice for a SQLite result code (`SQLITE_IOERR_SHORT_READ` → the `SQLITE_IOERR` advice). */
function databaseAdvice(code: string): string {
  const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
  return DB_ADVICE[primary] ?? 'check the database file (DATABASE_PATH), its folder and the disk';
}

/**
 * Wraps anything thrown into a MirrorError, keeping the original as `cause`. better-sqlite3's
 * SqliteError is a database error wherever it is thrown (exit 8), with a line saying what to do;
 * anything else unforeseen is `fallback` (a bug by default).
 */
export function toMirrorError(value: unknown, fallback: ErrorCode = 'UNEXPECTED'): MirrorError {
  if (value instanceof MirrorError) return value;
  const message = value instanceof Error ? value.message : String(value);
  const sqlite = sqliteCode(value);
  if (sqlite !== null) {
    const advice = databaseAdvice(sqlite);
    return new MirrorError(
      'DB_ERROR',
      `database error (${sqlite}): ${message}; ${advice}`,
      { sqliteCode: sqlite, advice },
      { cause: value },
    );
  }
  return new MirrorError(fallback, message, {}, { cause: value });
}

/** Shortens untrusted values quoted in error messages. */
export function truncateForMessage(value: unknown, max = 120): string {
  let text: string;
  try {
    // A number kept as its text (`1e400`, `100.0`) is named as the upstream wrote it.
    text = value === undefined ? 'undefined' : isLosslessNumber(value) ? value.value : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}
