import type { ErrorCode } from '../errors.js';

/** Exit codes of the CLI, documented in docs/cli.md; one place maps error codes to them. */
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

/** Exhaustive by type: a new error code does not compile until it has its exit code here. */
const EXIT_BY_CODE: Record<ErrorCode, number> = {
  CONFIG_INVALID: EXIT.usage,
  DB_NOT_FOUND: EXIT.usage,
  DB_TOO_NEW: EXIT.usage,
  UPSTREAM_MISMATCH: EXIT.usage,
  MEDIA_DIR_FOREIGN: EXIT.usage,
  UPSTREAM_NETWORK: EXIT.upstreamUnreachable,
  UPSTREAM_TIMEOUT: EXIT.upstreamUnreachable,
  UPSTREAM_HTTP_STATUS: EXIT.upstreamUnreachable,
  SYNC_TIMEOUT: EXIT.upstreamUnreachable,
  UPSTREAM_BODY_TOO_LARGE: EXIT.upstreamRejected,
  UPSTREAM_INVALID_JSON: EXIT.upstreamRejected,
  UPSTREAM_SCHEMA: EXIT.upstreamRejected,
  UPSTREAM_PAGINATION: EXIT.upstreamRejected,
  UPSTREAM_FOREIGN_NEXT: EXIT.upstreamRejected,
  UPSTREAM_PAGE_LOOP: EXIT.upstreamRejected,
  UPSTREAM_TOO_MANY_PAGES: EXIT.upstreamRejected,
  UPSTREAM_LISTING_TOO_LARGE: EXIT.upstreamRejected,
  UPSTREAM_INCONSISTENT: EXIT.upstreamRejected,
  UPSTREAM_UNSTABLE_ORDER: EXIT.upstreamRejected,
  EMPTY_LISTING_UNCONFIRMED: EXIT.upstreamRejected,
  LARGE_DROP_UNCONFIRMED: EXIT.upstreamRejected,
  SYNC_LOCKED: EXIT.locked,
  DB_ERROR: EXIT.database,
  RUN_ABORTED: EXIT.aborted,
  NOT_FOUND: EXIT.notFound,
  NAME_AMBIGUOUS: EXIT.usage,
  SNAPSHOT_INVALID: EXIT.upstreamRejected,
  SYNC_CRASHED: EXIT.unexpected,
  UNEXPECTED: EXIT.unexpected,
};

export function exitCodeFor(code: ErrorCode): number {
  return EXIT_BY_CODE[code];
}
