/**
 * The store's first listing: the run that recorded its first change, or null before any. A store
 * that never held a coworker can only add (`RunStage.recordFirstListing`), and coworker and change
 * rows are never deleted, so the first change belongs to the first run that listed anyone: its
 * changes are all `added`, the team as the mirror found it, not people who joined. Messages and
 * events tell that run apart by this one definition; a seek on changes_run_idx.
 */
export const FIRST_LISTING_RUN_SQL = 'select min(run_id) as run from changes';
