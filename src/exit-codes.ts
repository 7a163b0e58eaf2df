import type { ErrorCode } from './errors.js';

/** Exit codes of the CLI, documented in the README; one place maps error codes to them. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  upstreamUnreachable: 3,
  locked: 4,
  upstreamRejected: 5,
  aborted: 6,
  notFound: 7,
  database: 8,
} as const;

export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case 'CONFIG_INVALID':
    case 'DB_NOT_FOUND':
    case 'DB_TOO_NEW':
    case 'UPSTREAM_MISMATCH':
      return EXIT.usage;
    case 'UPSTREAM_NETWORK':
    case 'UPSTREAM_TIMEOUT':
    case 'UPSTREAM_HTTP_STATUS':
      return EXIT.upstreamUnreachable;
    case 'SYNC_LOCKED':
      return EXIT.locked;
    case 'RUN_ABORTED':
      return EXIT.aborted;
    case 'NOT_FOUND':
      return EXIT.notFound;
    case 'DB_ERROR':
      return EXIT.database;
    case 'UNEXPECTED':
      return EXIT.unexpected;
    default:
      return EXIT.upstreamRejected;
  }
}
