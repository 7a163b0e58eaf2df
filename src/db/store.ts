import type {
  ChangeKind,
  ChangeRow,
  CoworkerRow,
  DeliveryStatus,
  IdentityName,
  MediaRunRow,
  RunRow,
  RunTrigger,
  VersionRow,
  WebhookAttemptRow,
  listingPositions,
  mediaBlobs,
  mediaUrls,
  mediaVersions,
  webhookDeliveries,
  webhookEndpoints,
  webhookMessages,
} from './schema.js';
import type { ChangeSubject, RemovedAppearance, RunEnd, RunStage } from './run-commit.js';
import type { Readable } from 'node:stream';
import type { EndpointKeys } from './endpoint-keys.js';

/**
 * The store: every read and write of the mirror's history as a named operation with typed rows.
 * One interface, one implementation per database (src/db/sqlite/, and PostgreSQL beside it); the
 * rest of the code never sees SQL or a driver. Operations answer with Promises so a networked
 * database can implement them; the SQLite one does its work synchronously inside. A write that
 * must be atomic (a run's commit, a claim) is one operation, hence one transaction.
 */
export type Store = RunOperations &
  ListingOperations &
  HistoryOperations &
  PageOperations &
  MediaOperations &
  BlobOperations &
  DeliveryOperations &
  WatchOperations &
  PruneOperations &
  HealthOperations &
  IdentityOperations;

export type RunStatus = RunRow['status'];

/** Runs: the lock, a run's end, and the one definition of "the latest successful run". */
export interface RunOperations {
  /**
   * Takes the cross-process lock by recording a `running` run (runs whose holder died are marked
   * aborted first) started as `start` says (default: a bare `sync`), claiming its tick if it names
   * one. Rejects with TICK_SERVED naming the run that claimed that tick before (a unique key, so
   * whichever instance comes second), else SYNC_LOCKED naming the run that holds the lock.
   */
  beginRun(upstream: string, start?: RunStart, now?: Date): Promise<RunRow>;
  /** The run that claimed tick `tick` (an ISO time), whatever its status. */
  runOfTick(tick: string): Promise<RunRow | undefined>;
  /** When the newest run started, whatever started it; null when none was ever recorded. */
  latestRunStart(): Promise<string | null>;
  /** Refreshes a running run's heartbeat (no-op once it ended). */
  heartbeat(runId: number, at: string): Promise<void>;
  /**
   * The stage of a run that holds the lock: its crawled listing, diff and commit in temp tables of
   * one connection held until `close` (see run-stage.ts). A succeeded run's listing, media and
   * notifications are committed through it, in ONE transaction.
   */
  openStage(runId: number): Promise<RunStage>;
  /** A run's end without data, with its `sync.failed` notification, in one transaction. */
  endRun(end: RunEnd): Promise<void>;
  /** Forgets a run this process held (after it was committed or ended). */
  releaseRun(runId: number): Promise<void>;
  /** Marks the run that switched the database to a new upstream. */
  recordRebind(runId: number, from: string): Promise<void>;
  /**
   * Records a run that failed before it could record itself (its process died before taking the
   * lock): one finished `failed` row, so `runs`, `/runs/` and the API show the attempt. Its id.
   * It names what started it but claims no tick: it never served one, and another instance may.
   */
  recordFailedRun(run: {
    upstream: string;
    startedAt: Date;
    trigger: RunTrigger;
    error: { code: string; message: string };
  }): Promise<number>;
  /** Marks runs whose holder provably died as aborted; how many. */
  recoverDeadRuns(): Promise<number>;
  /** Newest first; a running run whose holder died reads as aborted. */
  listRuns(options: { limit: number; offset?: number }): Promise<RunRow[]>;
  countRuns(): Promise<number>;
  runCounts(): Promise<Map<RunStatus, number>>;
  getRun(id: number): Promise<RunRow | undefined>;
  /** The latest successful run (by finish time), or the latest finished at or before `asOf`. */
  latestSucceededRun(asOf?: string): Promise<RunRow | undefined>;
  /** The id of `latestSucceededRun()`, for cheap change detection. */
  latestSucceededRunId(): Promise<number | null>;
  /** The run recorded just before `runId`, whatever its status. */
  previousRun(runId: number): Promise<RunRow | undefined>;
  /**
   * When the unbroken streak of runs just before `runId` that failed with `code` over a listing of
   * `entries` began (the first one's start); null when the run just before is no such run.
   */
  refusalStreakStart(runId: number, code: string, entries: number): Promise<string | null>;
  /** Succeeded runs for a run picker, newest first. */
  succeededRunTimes(limit: number): Promise<{ id: number; finishedAt: string; entries: number | null }[]>;
  /** Finish (else start) times of the given runs. */
  runFinishTimes(ids: readonly number[]): Promise<Map<number, string>>;
}

/** The listing at a run: the one definition every reader of a listing goes through. */
export interface ListingOperations {
  /** The appearances of these uuids that were removed and are not back, with their last texts. */
  removedAppearances(
    uuids: readonly string[],
    hashOf: (body: string) => string,
  ): Promise<RemovedAppearance[]>;
  /** The listing at a succeeded run, entry texts in upstream order, with its OPTIONS body. */
  listingAt(run: RunRow): Promise<StoredListing>;
  /** The version ids listed at run `runId`, in listing order. */
  listedVersionIds(runId: number): Promise<Int32Array>;
  /** Stored entry texts by version id, in the order asked (undefined for an unknown id). */
  versionBodies(ids: ArrayLike<number>): Promise<(string | undefined)[]>;
  optionsBody(id: number): Promise<string | null>;
  /** Positions [offset, offset + limit) of the listing at run `runId`. */
  listingPage(runId: number, offset: number, limit: number): Promise<ListedEntry[]>;
}

/** Coworkers, their versions and changes. */
export interface HistoryOperations {
  listChanges(filter: ChangeFilter): Promise<ChangeRow[]>;
  /**
   * Every change the filter matches, newest first, in batches of at most `batchSize` read one at a
   * time by keyset on id (never OFFSET), so an export holds one batch whatever the history's length.
   * `keysetBatches` over the dialect's `listChanges` implements it.
   */
  changesInBatches(filter: ChangeStreamFilter, batchSize: number): AsyncIterable<ChangeRow[]>;
  /**
   * `changesInBatches` with each batch's `changeSubjects`, for the CSV export: SQLite reads both in
   * one statement per batch, PostgreSQL one after the other.
   */
  changesWithSubjects(filter: ChangeStreamFilter, batchSize: number): AsyncIterable<SubjectBatch>;
  /**
   * The id of the change `offset` places after the newest one `filter` matches (0: the newest), or
   * null when fewer match: where a batch of `offset + 1` rows ends, found by walking the filter's
   * index without reading a row's values, so a parallel export can hand out its batches in advance.
   */
  changeIdAt(filter: ChangeStreamFilter, offset: number): Promise<number | null>;
  /**
   * The rows `listChanges(filter)` reads as the JSON Lines export writes them (`ChangeLines`),
   * each line `changeView`'s, written by the database (src/db/change-lines.ts).
   */
  changeLines(filter: ChangeFilter): Promise<ChangeLines>;
  changedFields(): Promise<string[]>;
  getCoworker(uuid: string): Promise<CoworkerRow | undefined>;
  coworkerHistory(uuid: string): Promise<CoworkerHistory | undefined>;
  currentVersions(uuid: string): Promise<VersionRow[]>;
  listCoworkers(options: { limit: number; offset: number; includeRemoved: boolean }): Promise<CoworkerRow[]>;
  countCoworkers(includeRemoved: boolean): Promise<number>;
  namesOf(uuids: Iterable<string>): Promise<Map<string, string>>;
  findByName(text: string, limit?: number): Promise<NamedCoworker[]>;
}

/** Reads that exist for what a page shows. */
export interface PageOperations {
  coworkerDirectory(): Promise<DirectoryEntry[]>;
  /**
   * The directory and the id of the latest successful run, read in one snapshot of the database
   * (one transaction), so "as of run N" names the run the entries are from.
   */
  directoryWithRun(): Promise<{ runId: number | null; entries: DirectoryEntry[] }>;
  changeSubjects(rows: readonly ChangeRow[]): Promise<Map<number, ChangeSubject>>;
}

/** The media mirror's rows (the files live beside the database). */
export interface MediaOperations {
  liveMediaObjects(): Promise<Set<string>>;
  heldMedia(): Promise<HeldMedia[]>;
  /** Marks dropped the files no version valid since `cutoff` references; their sha256s. */
  dropMediaUnusedSince(cutoff: string): Promise<string[]>;
  mediaShasAt(runId: number): Promise<[url: string, sha256: string][]>;
  /** Whether any mirrored file is recorded as stored (not dropped). */
  hasStoredMedia(): Promise<boolean>;
  keptBlob(sha256: string): Promise<KeptBlob | undefined>;
  mediaFigures(): Promise<{
    total: MediaCounts;
    lastRun: MediaCounts;
    stored: { files: number; bytes: number };
  }>;
  mediaRunsByIds(runIds: readonly number[]): Promise<Map<number, MediaRunRow>>;
  /**
   * The media URLs run `runId` could not mirror and no later run tried again: counted by failure
   * code (most first), and the first `limit` by URL.
   */
  mediaFailuresOf(runId: number, limit: number): Promise<MediaFailures>;
}

/** Why a run's media URLs were not mirrored, as media_urls records each URL's last attempt. */
export interface MediaFailures {
  byCode: { code: string; count: number }[];
  first: { url: string; code: string; message: string }[];
}

/** Bytes [start, end] of a file, both inclusive (end = start - 1 for none). */
export interface ByteSpan {
  start: number;
  end: number;
}

/**
 * The mirrored files' bytes, content-addressed by sha256. On PostgreSQL the database holds them, so
 * any instance serves any file (its media folder is a cache filled from there). On SQLite the media
 * folder beside the file is the store, as it always was: `holdsBlobs` is false and these do nothing.
 */
export interface BlobOperations {
  readonly holdsBlobs: boolean;
  /**
   * Copies a complete local file already hashed to `sha256` into the store, before the run that
   * names it commits (a killed run leaves bytes no kept row names: `dropUnreferencedBlobs`). Whether it wrote.
   */
  putBlob(sha256: string, path: string): Promise<boolean>;
  /** Bytes of a held file, streamed with a bounded buffer; null when the store holds none. */
  openBlob(sha256: string, span: ByteSpan): Promise<Readable | null>;
  /**
   * The kept files whose bytes the store lacks (mirrored before it held them, copied in by the next
   * run of the instance whose folder has them), by sha256; none where the folder is the store.
   */
  keptBlobsWithoutBytes(): Promise<string[]>;
  /** Deletes bytes no kept media_blobs row names; only under the run lock. How many files. */
  dropUnreferencedBlobs(): Promise<number>;
  /**
   * The files retention dropped (MEDIA_RETENTION), by sha256: an instance deletes its cached copies.
   * A drop is announced to `watchCommits` after it commits.
   */
  droppedBlobs(): Promise<string[]>;
}

/** The webhook outbox (notification targets are endpoints of it too). */
export interface DeliveryOperations {
  /**
   * The ids of the outbox's endpoints in this store: a webhook URL's endpoint key, a notification
   * target's id. Keyed under the store's own key, so the database holds nothing a guessed URL can be
   * tested against; every process that opens the store gets the same ids.
   */
  readonly endpointKeys: EndpointKeys;
  /** Leases the due head of each enabled endpoint's queue, in one transaction. */
  claimDue(options: {
    urls: readonly string[];
    busyEndpoints: ReadonlySet<number>;
    leaseMs: number;
    token: string;
    now: number;
  }): Promise<ClaimResult>;
  /** Logs an attempt and moves its delivery on, in one transaction. */
  recordAttempt(claim: Claim, result: AttemptRecord, outcome: AttemptOutcome): Promise<void>;
  releaseLease(claim: Claim, token: string): Promise<void>;
  redeliver(id: number): Promise<boolean>;
  enableEndpoint(endpointId: number): Promise<boolean>;
  pendingDeliveries(urls: readonly string[]): Promise<number>;
  listDeliveries(filter: DeliveryFilter): Promise<DeliveryRow[]>;
  countDeliveries(filter: Omit<DeliveryFilter, 'limit'>): Promise<number>;
  getDelivery(id: number): Promise<{ delivery: DeliveryRow; attempts: WebhookAttemptRow[] } | undefined>;
  deliveryFigures(): Promise<{ byStatus: Map<DeliveryStatus, number>; disabledEndpoints: number }>;
  /** The notification targets (endpoints `notify:<targetId>`) a permanent refusal disabled, oldest first. */
  disabledNotifyTargets(): Promise<DisabledNotifyTarget[]>;
  /**
   * Re-enables the disabled notification target `targetId`, or every one when null; their pending
   * messages go out again at the next pass. Answers the ids it enabled (none when none matched).
   */
  enableNotifyTargets(targetId: string | null): Promise<string[]>;
}

/** Forgetting (src/db/prune.ts): removed coworkers, and history past a horizon. */
export interface PruneOperations {
  /**
   * Deletes what `request` names in ONE transaction under the run lock (SYNC_LOCKED while a sync
   * holds it, unless the caller holds it: `heldRun`), records the horizons it moved, then makes
   * the deleted bytes unreadable in the database's files as the database allows. The media files
   * it answers are the caller's to delete from the media folder (SQLite keeps them there).
   */
  prune(request: PruneRequest): Promise<PruneOutcome>;
  /** Before when history is no longer whole; both null when nothing was ever pruned. */
  pruneHorizon(): Promise<PruneHorizon>;
}

export interface DisabledNotifyTarget {
  targetId: string;
  disabledAt: string;
  reason: string | null;
}

export interface CommitWatchOptions {
  /** How often a store that cannot be told of commits asks (SQLite); PostgreSQL is told. */
  pollMs: number;
  /** The watch could not look (a lost connection); it goes on trying by itself. */
  onError?: (error: unknown) => void;
}

/** Commits made by any process or instance on this database. */
export interface WatchOperations {
  /**
   * Calls `onCommit` soon after any connection commits, and once when watching starts (and, on a
   * networked store, again after each reconnect, for what was committed meanwhile). A call may
   * carry no news; the caller checks what changed. Returns the stop.
   */
  watchCommits(onCommit: () => void, options: CommitWatchOptions): () => void;
}

/** What tells this database apart from every other (`store_identity`). */
export interface IdentityOperations {
  /**
   * The value kept under `name`; the first ask keeps `fresh()` (whoever asks first at once, every
   * asker gets the same value). On a database opened read-only, only a value already kept is read.
   */
  identityValue(name: IdentityName, fresh: () => string): Promise<string>;
}

export interface HealthOperations {
  /** Where the database is, for messages: a file path, or a connection's address without secrets. */
  readonly file: string;
  /** What is wrong with the database right now, or null (readiness). */
  databaseProblem(): Promise<string | null>;
  /**
   * What happened to the storage under this open connection (SQLite: the file deleted or replaced
   * on disk), or null. Synchronous and cheap: polled. Always null for a networked store.
   */
  storageProblem(): string | null;
  /**
   * What a whole-database integrity check (`PRAGMA quick_check`, off the event loop) opens: the
   * SQLite file, as a URI when it is read immutable. Null for a networked store: it checks itself.
   */
  readonly integrityTarget: string | null;
  /**
   * What another thread of this process opens for a read connection of its own to this database
   * (an export's second reader): the SQLite file, and whether it is read immutable. Null for a
   * networked store.
   */
  readonly readerTarget: ReaderTarget | null;
}

export interface ReaderTarget {
  file: string;
  immutable: boolean;
}

// What the operations answer, owned here so every reader imports them from the store, not from
// the module that reads them. Where a field is a column, its type is the column's.

export interface StoredListing {
  run: RunRow;
  entries: VersionRow['body'][];
  optionsBody: string | null;
}

/** One entry of a listing page: its position, its coworker and appearance, its stored text. */
export type ListedEntry = Pick<typeof listingPositions.$inferSelect, 'position'> &
  Pick<VersionRow, 'uuid' | 'body'> & { appearance: VersionRow['slot'] };

export interface CoworkerHistory {
  coworker: CoworkerRow;
  versions: VersionRow[];
  changes: ChangeRow[];
}

export type DirectoryEntry = Pick<CoworkerRow, 'uuid' | 'firstSeenAt'> & {
  /** Appearance (slot) of the uuid this row describes. */
  appearance: VersionRow['slot'];
  name: string;
  post: string;
  /** Null while present. */
  removedRun: CoworkerRow['removedRun'];
  removedAt: CoworkerRow['removedAt'];
};

/** Per URL, the bytes held (its latest version whose file is live) and its last attempt's validators. */
export type HeldMedia = Pick<typeof mediaVersions.$inferSelect, 'url' | 'sha256'> &
  Pick<typeof mediaUrls.$inferSelect, 'etag' | 'lastModified'>;

export type KeptBlob = Pick<typeof mediaBlobs.$inferSelect, 'size' | 'contentType'>;

export type MediaCounts = Pick<MediaRunRow, 'fetched' | 'revalidated' | 'failed' | 'bytes'>;

/** A delivery with its message and endpoint, as the API and the CLI list them. */
export type DeliveryRow = Pick<
  typeof webhookDeliveries.$inferSelect,
  'id' | 'endpointId' | 'status' | 'attempts' | 'nextAttemptAt' | 'createdAt' | 'finishedAt'
> &
  Pick<typeof webhookMessages.$inferSelect, 'webhookId' | 'type' | 'runId'> &
  Pick<typeof webhookEndpoints.$inferSelect, 'url' | 'disabledAt' | 'disabledReason'> & {
    lastAttempt: WebhookAttemptRow | null;
  };

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  endpoint?: number | undefined;
  limit: number;
  offset?: number;
}

// What the operations take and answer beyond rows: owned here, as the rows are.

/** A delivery this process has leased for one attempt; `tries`: failed attempts so far in this series. */
export interface Claim {
  endpointId: number;
  url: string;
  deliveryId: number;
  tries: number;
  webhookId: string;
  body: string;
}

/**
 * What started a run, as its row records it. `scheduledFor` is the tick of SYNC_CRON the run serves
 * (its nominal time as an ISO string, the same text on every instance), null for a run no tick
 * started. Inserting the run's row claims the tick: `runs_scheduled_for_idx` lets one row per tick
 * in, whichever instance comes second, so N instances cost the upstream one crawl per tick.
 */
export interface RunStart {
  trigger: RunTrigger;
  scheduledFor: string | null;
}

/** A read of the change feed: its filters, newest first, at most `limit`. */
export interface ChangeFilter {
  since?: string;
  until?: string;
  uuid?: string | undefined;
  /** Only these coworkers (the timeline's name filter); an empty list matches nothing. */
  uuids?: readonly string[] | undefined;
  field?: string | undefined;
  kind?: ChangeKind | undefined;
  limit: number;
  /** Keyset pagination: only changes with an id below this. */
  beforeId?: number | undefined;
}

/** A change filter for a stream: `limit` caps the whole stream (none: every match). */
export type ChangeStreamFilter = Omit<ChangeFilter, 'limit'> & { limit?: number | undefined };

/** One batch of changes with the subject (name and post at its run) of each, by change id. */
export interface SubjectBatch {
  rows: ChangeRow[];
  subjects: Map<number, ChangeSubject>;
}

/** How many rows a batch holds, and the id of its last (oldest). */
export interface BatchEnds {
  count: number;
  lastId: number | undefined;
}

/**
 * A batch of the JSON Lines export (`changes --json`, `/api/mirror/changes/export.jsonl`): the rows'
 * lines as UTF-8, each ended by a newline, with how many rows they are and the last (oldest) row's
 * id, where the next keyset batch starts.
 */
export interface ChangeLines extends BatchEnds {
  text: Uint8Array;
}

/** A coworker as a person looks for one: by the name its latest version carries. */
export interface NamedCoworker {
  uuid: string;
  name: string;
  post: string;
  removed: boolean;
}

/** What to forget. Instants are ISO texts (a duration back from `now`, worked out by the caller). */
export interface PruneRequest {
  /** Forget every coworker whose removal run finished at or before this instant. */
  removedBefore: string | null;
  /** Prune changes and closed versions of the runs before the latest succeeded run finished by then. */
  olderThan: string | null;
  /** When the prune runs (recorded). */
  now: string;
  /**
   * The run whose lock the caller holds (a prune right after that run's commit); unset: the prune
   * takes the lock itself, and refuses with SYNC_LOCKED while a sync holds it.
   */
  heldRun?: number;
  /**
   * The texts by which an outbox message tells of a person: their uuid always, and whatever a
   * message for people writes of their names (the notifications' floor knows that, not this one).
   */
  mentions: (person: ForgottenPerson) => string[];
  /** The media URLs an entry text names (the media floor knows which fields hold them). */
  mediaUrlsOf: (body: string) => string[];
}

/** A coworker being forgotten, as the outbox may name them. */
export interface ForgottenPerson {
  uuid: string;
  /** Every distinct name their versions carried. */
  names: string[];
}

/** How much history is no longer whole: what every surface says instead of showing a silent gap. */
export interface PruneHorizon {
  /** Coworkers removed by then were forgotten: listings before it lack them, and so does the feed. */
  removedBefore: string | null;
  /** Every change and closed version before then was pruned. */
  historyBefore: string | null;
}

export interface PruneOutcome {
  counts: PruneCounts;
  /** The sha256s of the files dropped: the caller deletes them from the media folder. */
  droppedFiles: string[];
  /**
   * Messages telling of what was pruned that still wait for a delivery: kept (a receiver is owed
   * them), and forgotten by the first prune after they are delivered or given up.
   */
  pendingMessages: number;
  /** The horizons after this prune. */
  horizon: PruneHorizon;
  /** Whether the deleted bytes were made unreadable in the database's files (see the dialects). */
  scrubbed: boolean;
  /** Why they were not, when `scrubbed` is false. */
  scrubProblem: string | null;
}

export interface ClaimResult {
  claims: Claim[];
  /** When the next delivery becomes due (a retry, or a lease another process holds ends); null: none. */
  nextWakeAt: number | null;
}

/** One attempt as the delivery log records it. */
export type AttemptRecord = Pick<
  WebhookAttemptRow,
  'at' | 'durationMs' | 'httpStatus' | 'ok' | 'errorCode' | 'error'
> & {
  excerpt: string | null;
};

export type AttemptOutcome =
  { kind: 'succeeded' } | { kind: 'gone' } | { kind: 'retry'; nextAttemptAt: string } | { kind: 'failed' };

/** What one prune deleted, table by table. */
export interface PruneCounts {
  coworkers: number;
  versions: number;
  positions: number;
  changes: number;
  mediaVersions: number;
  mediaUrls: number;
  /** Media files no kept row needed any more, marked dropped (their bytes deleted). */
  files: number;
  /** Outbox messages (webhooks, notifications) that told of what was pruned, all delivered or given up. */
  messages: number;
  deliveries: number;
  attempts: number;
}
