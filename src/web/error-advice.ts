import type { ErrorCode } from '../errors.js';

/** What a person can do about each way a run fails, shown on the status and run pages. */
// Partial: a code added elsewhere falls back to a generic line instead of failing the build.
const errorAdvice: Partial<Record<ErrorCode, string>> = {
  CONFIG_INVALID: 'Fix the setting named in the message and restart the mirror.',
  MEDIA_DIR_FOREIGN:
    'The media folder belongs to another database, so nothing in it was touched. Give this database a folder of its own (MEDIA_DIR) and restart.',
  UPSTREAM_NETWORK: 'The upstream could not be reached. Check that the site is up and UPSTREAM_URL is right.',
  UPSTREAM_TIMEOUT: 'The upstream answered too slowly. It may be overloaded; the next run tries again.',
  UPSTREAM_HTTP_STATUS:
    'The upstream answered with an error status. Check the site; if it needs a login, the mirror cannot read it.',
  UPSTREAM_BODY_TOO_LARGE:
    'A page was larger than UPSTREAM_MAX_BODY_BYTES allows. Raise the limit if it is genuine.',
  UPSTREAM_INVALID_JSON: 'The upstream sent something that is not JSON. Check the list address in a browser.',
  UPSTREAM_SCHEMA:
    'The upstream sent entries the mirror does not understand. Check the site for a changed API.',
  UPSTREAM_PAGINATION: 'The pages did not fit together. The next run tries again.',
  UPSTREAM_FOREIGN_NEXT:
    'A "next" link pointed elsewhere. Check UPSTREAM_URL against the address the site uses.',
  UPSTREAM_PAGE_LOOP: 'The pages led in a circle. Check the site; the next run tries again.',
  UPSTREAM_TOO_MANY_PAGES:
    'There were more pages than SYNC_MAX_PAGES allows. Raise it if the listing is genuine.',
  UPSTREAM_INCONSISTENT: 'The listing changed while it was read. Usually the next run succeeds.',
  UPSTREAM_UNSTABLE_ORDER:
    'The upstream lists entries in an unstable order, so removals could not be confirmed. Nothing was stored; the next run tries again.',
  EMPTY_LISTING_UNCONFIRMED:
    'The upstream listed nobody. If that is true, a run confirms it once it has held for SYNC_CONFIRM_DROP_AFTER (the message says from when); otherwise check the site.',
  LARGE_DROP_UNCONFIRMED:
    'The upstream suddenly listed far fewer people. The mirror keeps serving what it holds; if the drop is real, a run confirms it once it has held for SYNC_CONFIRM_DROP_AFTER (the message says from when), otherwise check the site.',
  SYNC_LOCKED: 'Another sync was running. Nothing to do: the next run goes ahead.',
  DB_ERROR: 'The database failed. Check free disk space and file permissions.',
  DATABASE_TIMEOUT:
    'The database did not answer in time: another session held a lock the run needed, or the server was stopped or overloaded. The message names the setting; the next run tries again.',
  RUN_ABORTED: 'The run was stopped (shutdown or crash). The next run starts afresh.',
  NOT_FOUND: 'Something the run needed was missing.',
  SNAPSHOT_INVALID: 'A stored snapshot could not be read back. Report it with the run number.',
  UNEXPECTED: 'An unexpected error. Report it with the run number and the log around it.',
};

/** Advice for a stored error code, which may come from a newer or older version of the mirror. */
export function adviceFor(code: string): string {
  return (errorAdvice as Record<string, string | undefined>)[code] ?? 'See the log around this run.';
}
