import * as changes from './change-reads.js';
import { keysetBatches, rowsEnds } from './change-batches.js';
import { changeLines } from './change-lines.js';
import * as directory from './directory-reads.js';
import type { EndpointKeys } from './endpoint-keys.js';
import * as history from './history-reads.js';
import * as listing from './listing-reads.js';
import * as mediaReads from './media-reads.js';
import * as names from './name-queries.js';
import type { NotificationRows } from './notify-outbox.js';
import * as outbox from './outbox-operations.js';
import type { OutboxPort } from './outbox-port.js';
import { mediaFailuresOf, refusalStreakStart } from './port-reads.js';
import { removedAppearances } from './removed-appearances.js';
import * as runs from './run-reads.js';
import * as records from './run-records.js';
import type { RunRow } from './schema.js';
import type { SqlPort, TransactionPort } from './sql-port.js';
import { identityValue } from './store-identity.js';
import type { BlobOperations, HealthOperations, Store } from './store.js';
import { COMMAND_START, type RunStart } from './tick-claims.js';
import { PortNotificationOutbox } from './notify-outbox.js';
import { readHorizon } from './prune.js';

type Op<K extends keyof Store> = Store[K];

/**
 * What truly differs between the databases under the one store: the run lock and what it makes of
 * a `running` row, the stage and a run's end, where the media bytes live, how commits are heard of,
 * the prune, health, closing, and what a failure becomes. Each dialect has one
 * (src/db/sqlite/store.ts, src/db/postgres/store.ts).
 */
export interface StoreDialect
  extends
    BlobOperations,
    HealthOperations,
    Pick<Store, 'openStage' | 'releaseRun' | 'recoverDeadRuns' | 'prune' | 'watchCommits' | 'endpointKeys'> {
  /** The port every operation written once reads and writes through. */
  readonly port: SqlPort;
  /** The same connection(s) with write transactions, for a write that must be atomic. */
  readonly writes: TransactionPort;
  readonly outbox: OutboxPort;
  /** Takes the run lock by recording a `running` run (Store's `beginRun`). */
  beginRun(upstream: string, start: RunStart, now: Date): Promise<RunRow>;
  /** Runs as a reader should see them: `running` with its holder provably gone reads as aborted. */
  asSeen(list: RunRow[]): Promise<RunRow[]>;
  /** Tells every instance that retention dropped files, after the drop committed. */
  mediaDropped(): Promise<void>;
  /**
   * What an operation's failure becomes (PostgreSQL: a DB_ERROR saying what to check, never the
   * password); none where the driver's error already says it.
   */
  readonly mapError: ((error: unknown) => unknown) | null;
  close(): void | Promise<void>;
}

/**
 * The store: every operation written once over the dialect's SQL port, what truly differs handed
 * to its `StoreDialect`. Answers are the same on both databases, row for row and byte for byte.
 */
export class PortStore implements Store {
  readonly #d: StoreDialect;
  // The dialect's constants as own fields, not getters over `#d`: a Proxy around the store (a test's
  // switchable store) reads a getter with itself as `this`, which has no `#d`.
  readonly holdsBlobs: boolean;
  readonly endpointKeys: EndpointKeys;
  readonly file: string;
  readonly integrityTarget: HealthOperations['integrityTarget'];
  readonly readerTarget: HealthOperations['readerTarget'];

  constructor(dialect: StoreDialect) {
    this.#d = dialect;
    ({
      holdsBlobs: this.holdsBlobs,
      endpointKeys: this.endpointKeys,
      file: this.file,
      integrityTarget: this.integrityTarget,
      readerTarget: this.readerTarget,
    } = dialect);
  }

  /** The operation with its failure mapped as the dialect says; a throw becomes a rejection. */
  #guard<A extends unknown[], R>(operation: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return (...args) => {
      const answer = new Promise<R>((resolve) => resolve(operation(...args)));
      const { mapError } = this.#d;
      return mapError === null
        ? answer
        : answer.catch((error: unknown) => {
            throw mapError(error);
          });
    };
  }

  get #port(): SqlPort {
    return this.#d.port;
  }

  /** The notification rows of the outbox, for the notification worker. */
  notificationOutbox(): NotificationRows {
    return new PortNotificationOutbox(this.#d.outbox);
  }

  /** Ends the store's connections (PostgreSQL frees any run lock still held first). */
  readonly close: () => void | Promise<void> = () => this.#d.close();

  // Runs
  beginRun: Op<'beginRun'> = this.#guard(
    (upstream: string, start: RunStart = COMMAND_START, now: Date = new Date()) =>
      this.#d.beginRun(upstream, start, now),
  );
  runOfTick: Op<'runOfTick'> = this.#guard((tick) => records.runOfTick(this.#port, tick));
  latestRunStart: Op<'latestRunStart'> = this.#guard(() => runs.latestRunStart(this.#port));
  heartbeat: Op<'heartbeat'> = this.#guard((runId, at) => records.heartbeat(this.#port, runId, at));
  endRun: Op<'endRun'> = this.#guard((end) => records.endRun(this.#d.writes, end));
  openStage: Op<'openStage'> = this.#guard((runId) => this.#d.openStage(runId));
  releaseRun: Op<'releaseRun'> = this.#guard((runId) => this.#d.releaseRun(runId));
  recordRebind: Op<'recordRebind'> = this.#guard((runId, from) =>
    records.recordRebind(this.#port, runId, from),
  );
  recordFailedRun: Op<'recordFailedRun'> = this.#guard((run) => records.recordFailedRun(this.#port, run));
  recoverDeadRuns: Op<'recoverDeadRuns'> = this.#guard(() => this.#d.recoverDeadRuns());
  listRuns: Op<'listRuns'> = this.#guard(async (options) =>
    this.#d.asSeen(await runs.runRows(this.#port, options)),
  );
  countRuns: Op<'countRuns'> = this.#guard(() => runs.countRuns(this.#port));
  runCounts: Op<'runCounts'> = this.#guard(() => runs.runCounts(this.#port));
  getRun: Op<'getRun'> = this.#guard(async (id) => {
    const run = await runs.runById(this.#port, id);
    return run && (await this.#d.asSeen([run]))[0];
  });
  latestSucceededRun: Op<'latestSucceededRun'> = this.#guard((asOf) =>
    runs.latestSucceededRun(this.#port, asOf),
  );
  latestSucceededRunId: Op<'latestSucceededRunId'> = this.#guard(() => runs.latestSucceededRunId(this.#port));
  previousRun: Op<'previousRun'> = this.#guard((runId) => runs.previousRun(this.#port, runId));
  refusalStreakStart: Op<'refusalStreakStart'> = this.#guard((runId, code, entries) =>
    refusalStreakStart(this.#port, runId, code, entries),
  );
  succeededRunTimes: Op<'succeededRunTimes'> = this.#guard((limit) =>
    runs.succeededRunTimes(this.#port, limit),
  );
  runFinishTimes: Op<'runFinishTimes'> = this.#guard((ids) => runs.runFinishTimes(this.#port, ids));

  // Listing
  removedAppearances: Op<'removedAppearances'> = this.#guard((uuids, hashOf) =>
    removedAppearances(this.#port, uuids, hashOf),
  );
  listingAt: Op<'listingAt'> = this.#guard((run) => listing.listingAt(this.#port, run));
  listedVersionIds: Op<'listedVersionIds'> = this.#guard((runId) =>
    listing.listedVersionIds(this.#port, runId),
  );
  versionBodies: Op<'versionBodies'> = this.#guard((ids) => listing.versionBodies(this.#port, ids));
  optionsBody: Op<'optionsBody'> = this.#guard((id) => listing.optionsBody(this.#port, id));
  listingPage: Op<'listingPage'> = this.#guard((runId, offset, limit) =>
    listing.listingPage(this.#port, runId, offset, limit),
  );

  // History
  listChanges: Op<'listChanges'> = this.#guard((filter) => changes.listChanges(this.#port, filter));
  changesInBatches: Op<'changesInBatches'> = (filter, batchSize) =>
    keysetBatches(this.listChanges, rowsEnds, filter, batchSize);
  changesWithSubjects: Op<'changesWithSubjects'> = (filter, batchSize) =>
    changes.changesWithSubjects(this.#port, this.changeSubjects, filter, batchSize);
  changeIdAt: Op<'changeIdAt'> = this.#guard((filter, offset) =>
    changes.changeIdAt(this.#port, filter, offset),
  );
  changeLines: Op<'changeLines'> = this.#guard((filter) => changeLines(this.#port, filter));
  changedFields: Op<'changedFields'> = this.#guard(() => history.changedFields(this.#port));
  getCoworker: Op<'getCoworker'> = this.#guard((uuid) => history.getCoworker(this.#port, uuid));
  coworkerHistory: Op<'coworkerHistory'> = this.#guard((uuid) => history.coworkerHistory(this.#port, uuid));
  currentVersions: Op<'currentVersions'> = this.#guard((uuid) => history.currentVersions(this.#port, uuid));
  listCoworkers: Op<'listCoworkers'> = this.#guard((options) => history.listCoworkers(this.#port, options));
  countCoworkers: Op<'countCoworkers'> = this.#guard((includeRemoved) =>
    history.countCoworkers(this.#port, includeRemoved),
  );
  namesOf: Op<'namesOf'> = this.#guard((uuids) => names.namesOf(this.#port, uuids));
  findByName: Op<'findByName'> = this.#guard((text, limit) => names.findByName(this.#port, text, limit));

  // Pages
  coworkerDirectory: Op<'coworkerDirectory'> = this.#guard(() => directory.coworkerDirectory(this.#port));
  directoryWithRun: Op<'directoryWithRun'> = this.#guard(() => directory.directoryWithRun(this.#port));
  changeSubjects: Op<'changeSubjects'> = this.#guard((rows) => changes.changeSubjects(this.#port, rows));

  // Media
  liveMediaObjects: Op<'liveMediaObjects'> = this.#guard(() => mediaReads.liveMediaObjects(this.#port));
  heldMedia: Op<'heldMedia'> = this.#guard(() => mediaReads.heldMedia(this.#port));
  dropMediaUnusedSince: Op<'dropMediaUnusedSince'> = this.#guard(async (cutoff) => {
    const dropped = await mediaReads.dropMediaUnusedSince(this.#d.writes, cutoff);
    if (dropped.length > 0) await this.#d.mediaDropped();
    return dropped;
  });
  mediaShasAt: Op<'mediaShasAt'> = this.#guard((runId) => mediaReads.mediaShasAt(this.#port, runId));
  hasStoredMedia: Op<'hasStoredMedia'> = this.#guard(() => mediaReads.hasStoredMedia(this.#port));
  keptBlob: Op<'keptBlob'> = this.#guard((sha256) => mediaReads.keptBlob(this.#port, sha256));
  mediaFigures: Op<'mediaFigures'> = this.#guard(() => mediaReads.mediaFigures(this.#port));
  mediaRunsByIds: Op<'mediaRunsByIds'> = this.#guard((runIds) =>
    mediaReads.mediaRunsByIds(this.#port, runIds),
  );
  mediaFailuresOf: Op<'mediaFailuresOf'> = this.#guard((runId, limit) =>
    mediaFailuresOf(this.#port, runId, limit),
  );

  // Identity
  identityValue: Op<'identityValue'> = this.#guard((name, fresh) => identityValue(this.#port, name, fresh));

  // Blobs: where the mirrored files' bytes live is the dialect's (BlobOperations).
  putBlob: Op<'putBlob'> = this.#guard((sha256, path) => this.#d.putBlob(sha256, path));
  openBlob: Op<'openBlob'> = this.#guard((sha256, span) => this.#d.openBlob(sha256, span));
  keptBlobsWithoutBytes: Op<'keptBlobsWithoutBytes'> = this.#guard(() => this.#d.keptBlobsWithoutBytes());
  dropUnreferencedBlobs: Op<'dropUnreferencedBlobs'> = this.#guard(() => this.#d.dropUnreferencedBlobs());
  droppedBlobs: Op<'droppedBlobs'> = this.#guard(() => this.#d.droppedBlobs());

  // Deliveries
  claimDue: Op<'claimDue'> = this.#guard((options) => outbox.claimDue(this.#d.outbox, options));
  recordAttempt: Op<'recordAttempt'> = this.#guard((claim, result, outcome) =>
    outbox.recordAttempt(this.#d.outbox, claim, result, outcome),
  );
  releaseLease: Op<'releaseLease'> = this.#guard((claim, token) =>
    outbox.releaseLease(this.#d.outbox, claim, token),
  );
  redeliver: Op<'redeliver'> = this.#guard((id) => outbox.redeliver(this.#d.outbox, id));
  enableEndpoint: Op<'enableEndpoint'> = this.#guard((endpointId) =>
    outbox.enableEndpoint(this.#d.outbox, endpointId),
  );
  pendingDeliveries: Op<'pendingDeliveries'> = this.#guard((urls) =>
    outbox.pendingDeliveries(this.#d.outbox, urls),
  );
  listDeliveries: Op<'listDeliveries'> = this.#guard((filter) =>
    outbox.listDeliveries(this.#d.outbox, filter),
  );
  countDeliveries: Op<'countDeliveries'> = this.#guard((filter) =>
    outbox.countDeliveries(this.#d.outbox, filter),
  );
  getDelivery: Op<'getDelivery'> = this.#guard((id) => outbox.getDelivery(this.#d.outbox, id));
  deliveryFigures: Op<'deliveryFigures'> = this.#guard(() => outbox.deliveryFigures(this.#d.outbox));
  disabledNotifyTargets: Op<'disabledNotifyTargets'> = this.#guard(() =>
    outbox.disabledNotifyTargets(this.#d.outbox),
  );
  enableNotifyTargets: Op<'enableNotifyTargets'> = this.#guard((targetId) =>
    outbox.enableNotifyTargets(this.#d.outbox, targetId),
  );

  // Prune
  prune: Op<'prune'> = this.#guard((request) => this.#d.prune(request));
  pruneHorizon: Op<'pruneHorizon'> = this.#guard(() => readHorizon(this.#port));

  // Watch
  watchCommits: Op<'watchCommits'> = (onCommit, options) => this.#d.watchCommits(onCommit, options);

  // Health
  databaseProblem: Op<'databaseProblem'> = () => this.#d.databaseProblem();
  storageProblem: Op<'storageProblem'> = () => this.#d.storageProblem();
}
