import type { EndpointKeys } from '../endpoint-keys.js';
import { immutableUri } from '../immutable-uri.js';
import type { SqliteHandle } from './handle.js';
import * as names from '../name-queries.js';
import * as directory from '../directory-reads.js';
import * as queries from '../queries.js';
import * as mediaReads from '../media-reads.js';
import * as records from '../run-records.js';
import { markRunInactive, recoverDeadRuns } from '../run-holders.js';
import type { RemovedAppearance, RunEnd } from '../run-commit.js';
import type { ReaderTarget, Store } from '../store.js';
import { changeBatches } from '../change-batches.js';
import * as changes from '../change-reads.js';
import { watchSqliteCommits } from './commit-watch.js';
import * as outbox from '../outbox-operations.js';
import * as listing from '../listing-reads.js';
import * as runs from '../run-reads.js';
import { runAsSeen } from '../run-liveness.js';
import { identityValue } from '../store-identity.js';
import { endRun } from './run-commit.js';
import { removedAppearances } from '../removed-appearances.js';
import { COMMAND_START } from '../tick-claims.js';
import { beginRun } from './run-lock.js';
import { openSqliteStage } from './stage.js';
import { pruneSqlite } from './prune.js';
import { readHorizon } from '../prune.js';
import { outboxPortOf, sqliteSqlPort, transactionPortOf } from './sql-port.js';
import { prepared } from '../prepared.js';
import type { SqlPort } from '../sql-port.js';
import { mediaFailuresOf, refusalStreakStart } from '../port-reads.js';
import * as history from '../history-reads.js';

type Op<K extends keyof Store> = Store[K];

/** Runs synchronous work as a settled Promise: a throw becomes a rejection, as a networked store's would. */
const settle = <T>(work: () => T): Promise<T> => new Promise<T>((resolve) => resolve(work()));

/**
 * The SQLite store: the named operations over one better-sqlite3 connection. Each does its work
 * synchronously (SQLite in-process answers in microseconds) and hands back a settled Promise, so
 * callers are written once for every database.
 */
export class SqliteStore implements SqliteHandle, Store {
  readonly db: SqliteHandle['db'];
  readonly sqlite: SqliteHandle['sqlite'];
  readonly file: string;
  readonly immutable: boolean;
  readonly fileProblem: () => string | null;
  readonly close: () => void;
  readonly endpointKeys: EndpointKeys;
  /** The port the reads written once for both dialects go through (src/db/port-reads.ts). */
  readonly #port: SqlPort;

  constructor(handle: SqliteHandle, endpointKeys: EndpointKeys) {
    this.endpointKeys = endpointKeys;
    this.db = handle.db;
    this.sqlite = handle.sqlite;
    this.file = handle.file;
    this.immutable = handle.immutable;
    this.fileProblem = handle.fileProblem;
    this.close = handle.close;
    this.#port = sqliteSqlPort((sql) => prepared(this.sqlite, sql));
  }

  // Runs
  beginRun: Op<'beginRun'> = (upstream, start = COMMAND_START, now = new Date()) =>
    settle(() => beginRun(this, upstream, start, now));
  runOfTick: Op<'runOfTick'> = (tick) => records.runOfTick(this.#port, tick);
  latestRunStart: Op<'latestRunStart'> = () => runs.latestRunStart(this.#port);
  heartbeat: Op<'heartbeat'> = (runId, at) => records.heartbeat(this.#port, runId, at);
  endRun = (end: RunEnd): Promise<void> => endRun(this, end);
  openStage: Op<'openStage'> = (runId) => openSqliteStage(this, runId);
  releaseRun: Op<'releaseRun'> = (runId) => settle(() => markRunInactive(this, runId));
  recordRebind: Op<'recordRebind'> = (runId, from) => records.recordRebind(this.#port, runId, from);
  recordFailedRun: Op<'recordFailedRun'> = (run) => records.recordFailedRun(this.#port, run);
  recoverDeadRuns: Op<'recoverDeadRuns'> = () => settle(() => recoverDeadRuns(this));
  /** Runs as a reader should see them: one whose holder provably died reads as aborted. */
  listRuns: Op<'listRuns'> = async (options) =>
    (await runs.runRows(this.#port, options)).map((run) => runAsSeen(this, run));
  countRuns: Op<'countRuns'> = () => runs.countRuns(this.#port);
  runCounts: Op<'runCounts'> = () => runs.runCounts(this.#port);
  getRun: Op<'getRun'> = async (id) => {
    const run = await runs.runById(this.#port, id);
    return run && runAsSeen(this, run);
  };
  latestSucceededRun: Op<'latestSucceededRun'> = (asOf) => runs.latestSucceededRun(this.#port, asOf);
  latestSucceededRunId: Op<'latestSucceededRunId'> = () => runs.latestSucceededRunId(this.#port);
  previousRun: Op<'previousRun'> = (runId) => runs.previousRun(this.#port, runId);
  refusalStreakStart: Op<'refusalStreakStart'> = (runId, code, entries) =>
    refusalStreakStart(this.#port, runId, code, entries);
  succeededRunTimes: Op<'succeededRunTimes'> = (limit) => runs.succeededRunTimes(this.#port, limit);
  runFinishTimes: Op<'runFinishTimes'> = (ids) => runs.runFinishTimes(this.#port, ids);

  // Listing
  removedAppearances = (
    uuids: readonly string[],
    hashOf: (body: string) => string,
  ): Promise<RemovedAppearance[]> => removedAppearances(this.#port, uuids, hashOf);
  listingAt: Op<'listingAt'> = (run) => listing.listingAt(this.#port, run);
  listedVersionIds: Op<'listedVersionIds'> = (runId) => listing.listedVersionIds(this.#port, runId);
  versionBodies: Op<'versionBodies'> = (ids) => listing.versionBodies(this.#port, ids);
  optionsBody: Op<'optionsBody'> = (id) => listing.optionsBody(this.#port, id);
  listingPage: Op<'listingPage'> = (runId, offset, limit) =>
    listing.listingPage(this.#port, runId, offset, limit);

  // History
  listChanges: Op<'listChanges'> = (filter) => changes.listChanges(this.#port, filter);
  changesInBatches: Op<'changesInBatches'> = (filter, batchSize) =>
    changeBatches(this.listChanges, filter, batchSize);
  changesWithSubjects: Op<'changesWithSubjects'> = (filter, batchSize) =>
    changes.changesWithSubjects(this.#port, this.changeSubjects, filter, batchSize);
  changeIdAt: Op<'changeIdAt'> = (filter, offset) => changes.changeIdAt(this.#port, filter, offset);
  changeLines: Op<'changeLines'> = (filter) => changes.changeLines(this.#port, filter);
  changedFields: Op<'changedFields'> = () => history.changedFields(this.#port);
  getCoworker: Op<'getCoworker'> = (uuid) => history.getCoworker(this.#port, uuid);
  coworkerHistory: Op<'coworkerHistory'> = (uuid) => history.coworkerHistory(this.#port, uuid);
  currentVersions: Op<'currentVersions'> = (uuid) => history.currentVersions(this.#port, uuid);
  listCoworkers: Op<'listCoworkers'> = (options) => history.listCoworkers(this.#port, options);
  countCoworkers: Op<'countCoworkers'> = (includeRemoved) =>
    history.countCoworkers(this.#port, includeRemoved);
  namesOf: Op<'namesOf'> = (uuids) => names.namesOf(this.#port, uuids);
  findByName: Op<'findByName'> = (text, limit) => names.findByName(this.#port, text, limit);

  // Pages
  coworkerDirectory: Op<'coworkerDirectory'> = () => directory.coworkerDirectory(this.#port);
  directoryWithRun: Op<'directoryWithRun'> = () => directory.directoryWithRun(this.#port);
  changeSubjects: Op<'changeSubjects'> = (rows) => changes.changeSubjects(this.#port, rows);

  // Media
  liveMediaObjects: Op<'liveMediaObjects'> = () => mediaReads.liveMediaObjects(this.#port);
  heldMedia: Op<'heldMedia'> = () => mediaReads.heldMedia(this.#port);
  dropMediaUnusedSince: Op<'dropMediaUnusedSince'> = (cutoff) =>
    mediaReads.dropMediaUnusedSince(transactionPortOf(this.sqlite), cutoff);
  mediaShasAt: Op<'mediaShasAt'> = (runId) => mediaReads.mediaShasAt(this.#port, runId);
  hasStoredMedia: Op<'hasStoredMedia'> = () => mediaReads.hasStoredMedia(this.#port);
  keptBlob: Op<'keptBlob'> = (sha256) => mediaReads.keptBlob(this.#port, sha256);
  mediaFigures: Op<'mediaFigures'> = () => mediaReads.mediaFigures(this.#port);
  mediaRunsByIds: Op<'mediaRunsByIds'> = (runIds) => mediaReads.mediaRunsByIds(this.#port, runIds);
  mediaFailuresOf: Op<'mediaFailuresOf'> = (runId, limit) => mediaFailuresOf(this.#port, runId, limit);

  // Identity
  identityValue: Op<'identityValue'> = (name, fresh) => identityValue(this.#port, name, fresh);

  // Blobs: the media folder beside the database holds the files (src/media/media-store.ts).
  readonly holdsBlobs = false;
  putBlob: Op<'putBlob'> = () => Promise.resolve(false);
  openBlob: Op<'openBlob'> = () => Promise.resolve(null);
  keptBlobsWithoutBytes: Op<'keptBlobsWithoutBytes'> = () => Promise.resolve([]);
  dropUnreferencedBlobs: Op<'dropUnreferencedBlobs'> = () => Promise.resolve(0);
  /** The folder is the store here: retention deletes the files itself. */
  droppedBlobs: Op<'droppedBlobs'> = () => Promise.resolve([]);

  // Deliveries
  claimDue: Op<'claimDue'> = (options) => outbox.claimDue(outboxPortOf(this.sqlite), options);
  recordAttempt: Op<'recordAttempt'> = (claim, result, outcome) =>
    outbox.recordAttempt(outboxPortOf(this.sqlite), claim, result, outcome);
  releaseLease: Op<'releaseLease'> = (claim, token) =>
    outbox.releaseLease(outboxPortOf(this.sqlite), claim, token);
  redeliver: Op<'redeliver'> = (id) => outbox.redeliver(outboxPortOf(this.sqlite), id);
  enableEndpoint: Op<'enableEndpoint'> = (endpointId) =>
    outbox.enableEndpoint(outboxPortOf(this.sqlite), endpointId);
  pendingDeliveries: Op<'pendingDeliveries'> = (urls) =>
    outbox.pendingDeliveries(outboxPortOf(this.sqlite), urls);
  listDeliveries: Op<'listDeliveries'> = (filter) => outbox.listDeliveries(outboxPortOf(this.sqlite), filter);
  countDeliveries: Op<'countDeliveries'> = (filter) =>
    outbox.countDeliveries(outboxPortOf(this.sqlite), filter);
  getDelivery: Op<'getDelivery'> = (id) => outbox.getDelivery(outboxPortOf(this.sqlite), id);
  deliveryFigures: Op<'deliveryFigures'> = () => outbox.deliveryFigures(outboxPortOf(this.sqlite));
  disabledNotifyTargets: Op<'disabledNotifyTargets'> = () =>
    outbox.disabledNotifyTargets(outboxPortOf(this.sqlite));
  enableNotifyTargets: Op<'enableNotifyTargets'> = (targetId) =>
    outbox.enableNotifyTargets(outboxPortOf(this.sqlite), targetId);

  // Prune
  prune: Op<'prune'> = (request) => pruneSqlite(this, request);
  pruneHorizon: Op<'pruneHorizon'> = () => readHorizon(this.#port);

  // Watch
  watchCommits: Op<'watchCommits'> = (onCommit, options) => watchSqliteCommits(this, onCommit, options);

  // Health
  databaseProblem: Op<'databaseProblem'> = () => settle(() => queries.databaseProblem(this));
  storageProblem: Op<'storageProblem'> = () => this.fileProblem();
  get readerTarget(): ReaderTarget {
    return { file: this.file, immutable: this.immutable };
  }
  get integrityTarget(): string {
    return this.immutable ? immutableUri(this.file) : this.file;
  }
}
