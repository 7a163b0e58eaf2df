import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import {
  changeKinds,
  deliveryStatuses,
  identityNames,
  outboxChannels,
  runStatuses,
  runTriggers,
} from './enums.js';

export { changeKinds, deliveryStatuses, identityNames, outboxChannels, runStatuses, runTriggers };
export type { ChangeKind, DeliveryStatus, IdentityName, RunTrigger } from './enums.js';

/** The OPTIONS body DRF answered, stored once per distinct text so unchanged runs add nothing. */
export const optionsBodies = sqliteTable('options_bodies', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  body: text('body').notNull().unique(),
});

/**
 * One row per sync attempt. A `running` row is also the cross-process lock: it names the process
 * holding it, so a second sync can say who holds the lock, and a crashed holder can be detected.
 */
export const runs = sqliteTable(
  'runs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    status: text('status', { enum: runStatuses }).notNull(),
    startedAt: text('started_at').notNull(),
    finishedAt: text('finished_at'),
    upstream: text('upstream').notNull(),
    holderPid: integer('holder_pid'),
    holderHost: text('holder_host'),
    /** Random per process: pid and host alone repeat, e.g. a restarted container's PID 1. */
    holderToken: text('holder_token'),
    /** Refreshed while the run is in progress; a holder on another host is dead once it goes stale. */
    heartbeatAt: text('heartbeat_at'),
    pages: integer('pages'),
    entries: integer('entries'),
    pageSize: integer('page_size'),
    added: integer('added').notNull().default(0),
    changed: integer('changed').notNull().default(0),
    removed: integer('removed').notNull().default(0),
    returned: integer('returned').notNull().default(0),
    unchanged: integer('unchanged').notNull().default(0),
    optionsBodyId: integer('options_body_id').references(() => optionsBodies.id),
    /** JSON array of unknown fields seen (schema drift), null when none. */
    unknownFields: text('unknown_fields'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    /** Set when this run moved the database to another upstream (`--rebind`): the one it mirrored before. */
    reboundFrom: text('rebound_from'),
    /** What started the run; null on runs recorded before it was kept. */
    trigger: text('trigger', { enum: runTriggers }),
    /**
     * The tick of SYNC_CRON the run serves (its nominal time, before SYNC_RANDOM_DELAY), null for a
     * run no tick started. Set only by the run that claimed the tick, when its row was inserted.
     */
    scheduledFor: text('scheduled_for'),
  },
  (t) => [
    index('runs_status_finished_idx').on(t.status, t.finishedAt),
    // At most one run holds the lock at any instant, whatever the processes do.
    uniqueIndex('runs_one_running_idx')
      .on(t.status)
      .where(sql`status = 'running'`),
    // One run per tick across every instance: a second claim of a tick is refused by this key.
    uniqueIndex('runs_scheduled_for_idx')
      .on(t.scheduledFor)
      .where(sql`scheduled_for is not null`),
  ],
);

/**
 * A coworker by uuid. `lastSeenRun` is written only on removal: while present, it is the latest run.
 * On SQLite the table is WITHOUT ROWID (migration coworkers_without_rowid: drizzle cannot declare
 * it), so the uuid is stored once; it has no rowid to select.
 */
export const coworkers = sqliteTable(
  'coworkers',
  {
    uuid: text('uuid').primaryKey(),
    firstSeenRun: integer('first_seen_run')
      .notNull()
      .references(() => runs.id),
    removedRun: integer('removed_run').references(() => runs.id),
    lastSeenRun: integer('last_seen_run').references(() => runs.id),
    returnedCount: integer('returned_count').notNull().default(0),
    lastReturnedRun: integer('last_returned_run').references(() => runs.id),
  },
  (t) => [
    // Removed coworkers only: a first sync's rows stay out of it.
    index('coworkers_removed_idx')
      .on(t.removedRun)
      .where(sql`removed_run is not null`),
  ],
);

/**
 * Every distinct state of one appearance of a coworker (SCD type 2). `slot` tells appearances of a
 * uuid that is listed more than once apart. `body` is the entry exactly as received (compact JSON,
 * key order kept). Valid from `validFromRun` up to, not including, `validToRun` (null: current).
 */
export const versions = sqliteTable(
  'versions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uuid: text('uuid')
      .notNull()
      .references(() => coworkers.uuid),
    slot: integer('slot').notNull(),
    body: text('body').notNull(),
    /** sha1 (base64) of `body`: the diff compares these instead of loading every body. */
    bodyHash: text('body_hash'),
    validFromRun: integer('valid_from_run')
      .notNull()
      .references(() => runs.id),
    validToRun: integer('valid_to_run').references(() => runs.id),
  },
  (t) => [
    index('versions_uuid_idx').on(t.uuid, t.validFromRun),
    // The newest version of each appearance (uuid, slot) in a few steps, however long its history:
    // what a run's diff asks of every uuid that may take back a removed appearance.
    index('versions_slot_idx').on(t.uuid, t.slot, t.id),
    index('versions_current_idx')
      .on(t.validToRun)
      .where(sql`valid_to_run is null`),
  ],
);

/**
 * The ordered listing, also SCD type 2: position → version for a span of runs. The listing served
 * after run R is every row with validFromRun <= R < validToRun, ordered by position, so a run that
 * changes nothing writes nothing here.
 */
export const listingPositions = sqliteTable(
  'listing_positions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    position: integer('position').notNull(),
    versionId: integer('version_id')
      .notNull()
      .references(() => versions.id),
    validFromRun: integer('valid_from_run')
      .notNull()
      .references(() => runs.id),
    validToRun: integer('valid_to_run').references(() => runs.id),
  },
  (t) => [
    index('listing_positions_span_idx').on(t.validFromRun, t.validToRun),
    index('listing_positions_current_idx')
      .on(t.position)
      .where(sql`valid_to_run is null`),
    // The team page of a past run reads one page of positions: a seek per position, not a scan of spans.
    index('listing_positions_position_idx').on(t.position, t.validFromRun),
  ],
);

/**
 * Field-level changes and added / removed / returned events, one row each. A change happened when
 * its run committed: its time is the run's `finished_at`, stored once there (migration
 * change_time_from_run), not in every row.
 */
export const changes = sqliteTable(
  'changes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    runId: integer('run_id')
      .notNull()
      .references(() => runs.id),
    uuid: text('uuid').notNull(),
    slot: integer('slot').notNull(),
    kind: text('kind', { enum: changeKinds }).notNull(),
    field: text('field'),
    /**
     * JSON text of the value as received; null when the field was absent. An `added`, `returned` or
     * `removed` change whose entry is `versionId`'s body stores null here instead of a second copy.
     */
    oldValue: text('old_value'),
    newValue: text('new_value'),
    /** The version holding the whole entry of an added/returned (new) or removed (old) change. */
    versionId: integer('version_id').references(() => versions.id),
  },
  (t) => [
    index('changes_uuid_idx').on(t.uuid, t.id),
    // A change's time is its run's (runs.finished_at): a time bound is a run bound, then a seek here
    // (SQLite appends the rowid, the change id, to every index entry).
    index('changes_run_idx').on(t.runId),
    // Only field changes have a field: added/removed/returned rows, most of a first sync, stay out.
    index('changes_field_idx')
      .on(t.field, t.id)
      .where(sql`field is not null`),
    // Every filter by kind seeks here, `added` too: after a first sync, later additions are few among
    // a history of edits, and walking the ids to find them would read most of the table.
    index('changes_kind_idx').on(t.kind, t.id),
  ],
);

// --- Media mirror (MEDIA_ORIGINS): files live beside the database, these rows say what they are. ---

/**
 * One stored file, named by the sha256 of its bytes (deduplicated across coworkers and versions).
 * A row is committed only after its file is complete, fsynced and renamed into place.
 */
export const mediaBlobs = sqliteTable('media_blobs', {
  sha256: text('sha256').primaryKey(),
  size: integer('size').notNull(),
  /** The Content-Type the media host sent, checked against the bytes' signature. */
  contentType: text('content_type').notNull(),
  createdRun: integer('created_run')
    .notNull()
    .references(() => runs.id),
  /** Set when retention deleted the file; the row stays so history can say what was there. */
  droppedAt: text('dropped_at'),
});

/** The bytes behind one media URL over time (SCD type 2, like versions): a new sha256 opens a row. */
export const mediaVersions = sqliteTable(
  'media_versions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    url: text('url').notNull(),
    sha256: text('sha256')
      .notNull()
      .references(() => mediaBlobs.sha256),
    validFromRun: integer('valid_from_run')
      .notNull()
      .references(() => runs.id),
    validToRun: integer('valid_to_run').references(() => runs.id),
  },
  (t) => [
    index('media_versions_url_idx').on(t.url, t.validFromRun),
    index('media_versions_span_idx').on(t.validFromRun, t.validToRun),
    index('media_versions_sha_idx').on(t.sha256),
  ],
);

/** What the last attempt at a URL gave: validators for revalidation, or why it failed. */
export const mediaUrls = sqliteTable('media_urls', {
  url: text('url').primaryKey(),
  etag: text('etag'),
  lastModified: text('last_modified'),
  checkedRun: integer('checked_run')
    .notNull()
    .references(() => runs.id),
  /** Null when the last attempt succeeded (fetched or revalidated). */
  failureCode: text('failure_code'),
  failureMessage: text('failure_message'),
});

/** Media figures of one run, written in the run's own commit. */
export const mediaRuns = sqliteTable('media_runs', {
  runId: integer('run_id')
    .primaryKey()
    .references(() => runs.id),
  fetched: integer('fetched').notNull(),
  revalidated: integer('revalidated').notNull(),
  failed: integer('failed').notNull(),
  bytes: integer('bytes').notNull(),
});

export type MediaRunRow = typeof mediaRuns.$inferSelect;

export type RunRow = typeof runs.$inferSelect;
/** A coworker as every reader sees it: the times of its runs read from `runs` (src/db/run-times.ts). */
export type CoworkerRow = typeof coworkers.$inferSelect & {
  firstSeenAt: string;
  removedAt: string | null;
  lastSeenAt: string | null;
};
export type VersionRow = typeof versions.$inferSelect;
/**
 * A change as every reader sees it: the entry a stored row refers to by `versionId` is resolved into
 * `oldValue`/`newValue` by the store's queries (src/db/change-columns.ts), so the reference never
 * leaves src/db/.
 */
export type ChangeRow = Pick<StoredChange, 'id' | 'runId'> & {
  /** The run's `finished_at`. */
  at: string;
} & Omit<StoredChange, 'id' | 'runId' | 'versionId'>;
type StoredChange = typeof changes.$inferSelect;

/**
 * One prune (`coworker-mirror prune`, PRUNE_REMOVED_AFTER, PRUNE_OLDER_THAN) that deleted anything: the
 * horizons every surface reads to say that history before them is incomplete, and what went.
 */
export const prunes = sqliteTable('prunes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  at: text('at').notNull(),
  /**
   * Coworkers removed by then were forgotten: the finish of the latest removal pruned. A listing
   * before it (time travel) lacks them; the change feed before it lacks their changes.
   */
  removedBefore: text('removed_before'),
  /** Every change and closed version before then was pruned: the finish of the oldest run still whole. */
  historyBefore: text('history_before'),
  coworkers: integer('coworkers').notNull(),
  versions: integer('versions').notNull(),
  positions: integer('positions').notNull(),
  changes: integer('changes').notNull(),
  mediaVersions: integer('media_versions').notNull(),
  files: integer('files').notNull(),
  messages: integer('messages').notNull(),
});

export type PruneRow = typeof prunes.$inferSelect;

// Webhooks: a transactional outbox. Messages and their deliveries are written in the run's own
// transaction, so a notification exists exactly when the run it tells of does.

/** A receiver of webhooks, by URL. A 410 Gone disables it until someone re-enables it. */
export const webhookEndpoints = sqliteTable('webhook_endpoints', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  url: text('url').notNull().unique(),
  createdAt: text('created_at').notNull(),
  disabledAt: text('disabled_at'),
  disabledReason: text('disabled_reason'),
  /** Which sender its rows go to; the rows of an endpoint written before it were told apart by URL. */
  channel: text('channel', { enum: outboxChannels }).notNull().default('webhook'),
});

/** One event as sent: `body` is the exact JSON signed and posted on every attempt. */
export const webhookMessages = sqliteTable(
  'webhook_messages',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** The `webhook-id` header: the same on every attempt, so receivers can deduplicate. */
    webhookId: text('webhook_id').notNull().unique(),
    type: text('type').notNull(),
    runId: integer('run_id')
      .notNull()
      .references(() => runs.id),
    createdAt: text('created_at').notNull(),
    body: text('body').notNull(),
    /**
     * Set by a prune when the message tells of what it pruned but a receiver is still owed it: the
     * first prune after its deliveries end forgets it.
     */
    prunedAt: text('pruned_at'),
  },
  (t) => [index('webhook_messages_run_idx').on(t.runId)],
);

/**
 * One message to one endpoint. Per endpoint, the oldest pending delivery goes first and the others
 * wait behind it (in order). `leaseUntil` marks an attempt in flight in some process.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    messageId: integer('message_id')
      .notNull()
      .references(() => webhookMessages.id),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    status: text('status', { enum: deliveryStatuses }).notNull(),
    /** Failed attempts since it was created or last redelivered; indexes the retry schedule. */
    tries: integer('tries').notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: text('next_attempt_at').notNull(),
    leaseUntil: text('lease_until'),
    leaseToken: text('lease_token'),
    createdAt: text('created_at').notNull(),
    finishedAt: text('finished_at'),
  },
  (t) => [
    index('webhook_deliveries_pending_idx')
      .on(t.endpointId, t.id)
      .where(sql`status = 'pending'`),
    index('webhook_deliveries_status_idx').on(t.status, t.id),
  ],
);

/** Every attempt, kept as a delivery log: what was answered, how fast, and at most 1 KB of it. */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    deliveryId: integer('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id),
    at: text('at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    /** HTTP status answered; null when none came (refused, timeout). */
    httpStatus: integer('http_status'),
    ok: integer('ok', { mode: 'boolean' }).notNull(),
    errorCode: text('error_code'),
    error: text('error'),
    responseExcerpt: text('response_excerpt'),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.id)],
);

export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;

/**
 * What tells this database apart from every other, one named value a row: `mirror_id` is a random
 * id made the first time something asks for it (a media folder's owner file names it, so a folder is
 * never taken for another database's); `endpoint_id_key` the random key the outbox's endpoint ids
 * are keyed under (src/db/endpoint-keys.ts), made when the database is first opened for writing,
 * never shown. Rows rather than columns: another value is one more row.
 */
export const storeIdentity = sqliteTable('store_identity', {
  name: text('name', { enum: identityNames }).primaryKey(),
  value: text('value').notNull(),
  createdAt: text('created_at').notNull(),
});
