/**
 * The store's first listing: the first succeeded run that added anyone, or null before any. A store
 * that never held a coworker can only add (`RunStage.recordFirstListing`), so that run's changes
 * are all `added`, the team as the mirror found it, not people who joined. Messages and events tell
 * that run apart by this one definition. Read from `runs`, which nothing deletes, rather than from
 * the changes: a prune (`--older-than`) deletes the changes of old runs, and the first run whose
 * changes are left would pass for the first listing. A walk of runs in id order that stops at the
 * first one that added anyone (almost always the first).
 */
export const FIRST_LISTING_RUN_SQL =
  "select id as run from runs where status = 'succeeded' and added > 0 order by id limit 1";
