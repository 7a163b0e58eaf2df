import type { BlobOperations, HealthOperations, RunStart, Store } from './store.js';
import * as changes from './change-reads.js';
import { keysetBatches, rowsEnds } from './change-batches.js';
import { changeLines } from './change-lines.js';
import * as directory from './directory-reads.js';
import type { EndpointKeys } from './endpoint-keys.js';
import * as history from './history-reads.js';
import * as listing from './listing-reads.js';
import * as mediaReads from './media-reads.js';
import * as names from './name-queries.js';
import * as attempts from './outbox-attempts.js';
import { claimDue } from './outbox-claim.js';
import * as deliveries from './outbox-reads.js';
import type { OutboxPort } from './outbox-port.js';
import { mediaFailuresOf, refusalStreakStart } from './port-reads.js';
import { removedAppearances } from './removed-appearances.js';
import * as runs from './run-reads.js';
import * as records from './run-records.js';
import type { RunRow } from './schema.js';
import type { SqlPort, TransactionPort } from './sql-port.js';
import { identityValue } from './store-identity.js';
import { COMMAND_START } from './tick-claims.js';
import * as notify from './notify-outbox.js';
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

  /** An operation written over the port, `(port, ...args)`, bound to this store's and guarded. */
  #read<A extends unknown[], R>(
    operation: (port: SqlPort, ...args: A) => Promise<R>,
  ): (...args: A) => Promise<R> {
    return this.#guard((...args: A) => operation(this.#d.port, ...args));
  }

  /** An operation written over the outbox's port, bound to this store's and guarded. */
  #outbox<A extends unknown[], R>(
    operation: (port: OutboxPort, ...args: A) => Promise<R>,
  ): (...args: A) => Promise<R> {
    return this.#guard((...args: A) => operation(this.#d.outbox, ...args));
  }

  get #port(): SqlPort {
    return this.#d.port;
  }

  /** The notification rows of the outbox, for the notification worker. */
  notificationOutbox(): notify.NotificationRows {
    return new notify.PortNotificationOutbox(this.#d.outbox);
  }

  /** Ends the store's connections (PostgreSQL frees any run lock still held first). */
  readonly close: () => void | Promise<void> = () => this.#d.close();

  // Runs
  beginRun: Op<'beginRun'> = this.#guard(
    (upstream: string, start: RunStart = COMMAND_START, now: Date = new Date()) =>
      this.#d.beginRun(upstream, start, now),
  );
  runOfTick: Op<'runOfTick'> = this.#read(records.runOfTick);
  latestRunStart: Op<'latestRunStart'> = this.#read(runs.latestRunStart);
  heartbeat: Op<'heartbeat'> = this.#read(records.heartbeat);
  endRun: Op<'endRun'> = this.#guard((end) => records.endRun(this.#d.writes, end));
  openStage: Op<'openStage'> = this.#guard((runId) => this.#d.openStage(runId));
  releaseRun: Op<'releaseRun'> = this.#guard((runId) => this.#d.releaseRun(runId));
  recordRebind: Op<'recordRebind'> = this.#read(records.recordRebind);
  recordFailedRun: Op<'recordFailedRun'> = this.#read(records.recordFailedRun);
  recoverDeadRuns: Op<'recoverDeadRuns'> = this.#guard(() => this.#d.recoverDeadRuns());
  listRuns: Op<'listRuns'> = this.#guard(async (options) =>
    this.#d.asSeen(await runs.runRows(this.#port, options)),
  );
  countRuns: Op<'countRuns'> = this.#read(runs.countRuns);
  runCounts: Op<'runCounts'> = this.#read(runs.runCounts);
  getRun: Op<'getRun'> = this.#guard(async (id) => {
    const run = await runs.runById(this.#port, id);
    return run && (await this.#d.asSeen([run]))[0];
  });
  latestSucceededRun: Op<'latestSucceededRun'> = this.#read(runs.latestSucceededRun);
  latestSucceededRunId: Op<'latestSucceededRunId'> = this.#read(runs.latestSucceededRunId);
  previousRun: Op<'previousRun'> = this.#read(runs.previousRun);
  refusalStreakStart: Op<'refusalStreakStart'> = this.#read(refusalStreakStart);
  succeededRunTimes: Op<'succeededRunTimes'> = this.#read(runs.succeededRunTimes);
  runFinishTimes: Op<'runFinishTimes'> = this.#read(runs.runFinishTimes);

  // Listing
  removedAppearances: Op<'removedAppearances'> = this.#read(removedAppearances);
  listingAt: Op<'listingAt'> = this.#read(listing.listingAt);
  listedVersionIds: Op<'listedVersionIds'> = this.#read(listing.listedVersionIds);
  versionBodies: Op<'versionBodies'> = this.#read(listing.versionBodies);
  optionsBody: Op<'optionsBody'> = this.#read(listing.optionsBody);
  listingPage: Op<'listingPage'> = this.#read(listing.listingPage);

  // History
  listChanges: Op<'listChanges'> = this.#read(changes.listChanges);
  changesInBatches: Op<'changesInBatches'> = (filter, batchSize) =>
    keysetBatches(this.listChanges, rowsEnds, filter, batchSize);
  changesWithSubjects: Op<'changesWithSubjects'> = (filter, batchSize) =>
    changes.changesWithSubjects(this.#port, this.changeSubjects, filter, batchSize);
  changeIdAt: Op<'changeIdAt'> = this.#read(changes.changeIdAt);
  changeLines: Op<'changeLines'> = this.#read(changeLines);
  changedFields: Op<'changedFields'> = this.#read(history.changedFields);
  getCoworker: Op<'getCoworker'> = this.#read(history.getCoworker);
  coworkerHistory: Op<'coworkerHistory'> = this.#read(history.coworkerHistory);
  currentVersions: Op<'currentVersions'> = this.#read(history.currentVersions);
  listCoworkers: Op<'listCoworkers'> = this.#read(history.listCoworkers);
  countCoworkers: Op<'countCoworkers'> = this.#read(history.countCoworkers);
  namesOf: Op<'namesOf'> = this.#read(names.namesOf);
  findByName: Op<'findByName'> = this.#read(names.findByName);

  // Pages
  coworkerDirectory: Op<'coworkerDirectory'> = this.#read(directory.coworkerDirectory);
  directoryWithRun: Op<'directoryWithRun'> = this.#read(directory.directoryWithRun);
  changeSubjects: Op<'changeSubjects'> = this.#read(changes.changeSubjects);

  // Media
  liveMediaObjects: Op<'liveMediaObjects'> = this.#read(mediaReads.liveMediaObjects);
  heldMedia: Op<'heldMedia'> = this.#read(mediaReads.heldMedia);
  dropMediaUnusedSince: Op<'dropMediaUnusedSince'> = this.#guard(async (cutoff) => {
    const dropped = await mediaReads.dropMediaUnusedSince(this.#d.writes, cutoff);
    if (dropped.length > 0) await this.#d.mediaDropped();
    return dropped;
  });
  mediaShasAt: Op<'mediaShasAt'> = this.#read(mediaReads.mediaShasAt);
  hasStoredMedia: Op<'hasStoredMedia'> = this.#read(mediaReads.hasStoredMedia);
  keptBlob: Op<'keptBlob'> = this.#read(mediaReads.keptBlob);
  mediaFigures: Op<'mediaFigures'> = this.#read(mediaReads.mediaFigures);
  mediaRunsByIds: Op<'mediaRunsByIds'> = this.#read(mediaReads.mediaRunsByIds);
  mediaFailuresOf: Op<'mediaFailuresOf'> = this.#read(mediaFailuresOf);

  // Identity
  identityValue: Op<'identityValue'> = this.#read(identityValue);

  // Blobs: where the mirrored files' bytes live is the dialect's (BlobOperations).
  putBlob: Op<'putBlob'> = this.#guard((sha256, path) => this.#d.putBlob(sha256, path));
  openBlob: Op<'openBlob'> = this.#guard((sha256, span) => this.#d.openBlob(sha256, span));
  keptBlobsWithoutBytes: Op<'keptBlobsWithoutBytes'> = this.#guard(() => this.#d.keptBlobsWithoutBytes());
  dropUnreferencedBlobs: Op<'dropUnreferencedBlobs'> = this.#guard(() => this.#d.dropUnreferencedBlobs());
  droppedBlobs: Op<'droppedBlobs'> = this.#guard(() => this.#d.droppedBlobs());

  // Deliveries
  claimDue: Op<'claimDue'> = this.#outbox(claimDue);
  recordAttempt: Op<'recordAttempt'> = this.#outbox(attempts.recordAttempt);
  releaseLease: Op<'releaseLease'> = this.#outbox(attempts.releaseLease);
  redeliver: Op<'redeliver'> = this.#outbox(attempts.redeliver);
  enableEndpoint: Op<'enableEndpoint'> = this.#outbox(attempts.enableEndpoint);
  pendingDeliveries: Op<'pendingDeliveries'> = this.#outbox(deliveries.pendingDeliveries);
  listDeliveries: Op<'listDeliveries'> = this.#outbox(deliveries.listDeliveries);
  countDeliveries: Op<'countDeliveries'> = this.#outbox(deliveries.countDeliveries);
  getDelivery: Op<'getDelivery'> = this.#outbox(deliveries.getDelivery);
  deliveryFigures: Op<'deliveryFigures'> = this.#outbox(deliveries.deliveryFigures);
  disabledNotifyTargets: Op<'disabledNotifyTargets'> = this.#outbox(notify.disabledNotifyTargets);
  enableNotifyTargets: Op<'enableNotifyTargets'> = this.#outbox(notify.enableNotifyTargets);

  // Prune
  prune: Op<'prune'> = this.#guard((request) => this.#d.prune(request));
  pruneHorizon: Op<'pruneHorizon'> = this.#read(readHorizon);

  // Watch
  watchCommits: Op<'watchCommits'> = (onCommit, options) => this.#d.watchCommits(onCommit, options);

  // Health
  databaseProblem: Op<'databaseProblem'> = () => this.#d.databaseProblem();
  storageProblem: Op<'storageProblem'> = () => this.#d.storageProblem();
}
