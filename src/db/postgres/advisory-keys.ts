// PostgreSQL advisory locks are named by numbers shared by every application on the database: ours
// use the two-int form, a namespace of our own (the bytes "cwmr") and one key per lock. In pg_locks
// they show as classid = namespace, objid = key, objsubid = 2.

export const ADVISORY_NAMESPACE = 0x63776d72;

/** Held while one instance applies migrations. */
export const MIGRATION_LOCK = 1;

/** Held for as long as one instance runs a sync. */
export const RUN_LOCK = 2;

/**
 * Held by the transaction that begins a run (claims its tick, takes RUN_LOCK, records the run): one
 * instance at a time, so a tick and the lock are taken together.
 */
export const BEGIN_RUN_LOCK = 4;

/** Held by the transaction that writes a period's digest: one writer at a time across instances. */
export const DIGEST_LOCK = 3;
