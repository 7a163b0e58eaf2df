import { deadlinesOf, type DatabaseDeadlines } from '../../config/database-deadlines.js';
import type { PostgresTarget } from '../../config/database-url.js';
import { silentLogger, type Logger } from '../../logger.js';
import type { Store } from '../store.js';
import { COMMAND_START, type RunStart } from '../tick-claims.js';
import type { PgContext } from './context.js';
import * as outbox from '../outbox-operations.js';
import { connectionError, operationError, timeoutError } from './errors.js';
import * as names from '../name-queries.js';
import { identityValue } from '../store-identity.js';
import * as listing from '../listing-reads.js';
import * as runReads from '../run-reads.js';
import * as records from '../run-records.js';
import * as mediaReads from '../media-reads.js';
import * as blobs from './media-blobs.js';
import { newInstanceId, openPostgres, type PostgresDatabase } from './open.js';
import { changeBatches } from '../change-batches.js';
import * as changes from '../change-reads.js';
import { endpointKeysOver } from '../endpoint-keying.js';
import type { EndpointKeys } from '../endpoint-keys.js';
import type { NotificationRows } from '../notify-outbox.js';
import { PortNotificationOutbox } from '../notify-outbox.js';
import { announceMediaDropped, SharedCommitWatch } from './commit-watch.js';
import * as directory from '../directory-reads.js';
import { prunePg } from './prune.js';
import { readHorizon } from '../prune.js';
import { endRun } from './run-commit.js';
import { removedAppearances } from '../removed-appearances.js';
import { guardedStage } from '../guarded-stage.js';
import { openPgStage } from './stage.js';
import * as runs from './runs.js';
import type { HeldRunLock } from './run-lock.js';
import { one } from './sql.js';
import { pgOutboxPort, pgSqlPort, pgTransactionPort } from './sql-port.js';
import { mediaFailuresOf, refusalStreakStart } from '../port-reads.js';
import * as historyReads from '../history-reads.js';
import type { SqlPort } from '../sql-port.js';

type Op<K extends keyof Store> = Store[K];

/**
 * The PostgreSQL store: the named operations over a pooled connection, each one query or one
 * transaction. Answers are those of the SQLite store, row for row and byte for byte.
 */
export class PgStore implements Store {
  /** The database as it may be shown: its URL with the password masked. */
  readonly file: string;
  readonly instanceId: string;
  readonly #database: PostgresDatabase;
  readonly #ctx: PgContext;
  readonly endpointKeys: EndpointKeys;
  /** The port the reads written once for both dialects go through, their statements prepared. */
  readonly #port: SqlPort;

  constructor(database: PostgresDatabase, target: PostgresTarget, endpointKeys: EndpointKeys) {
    this.#database = database;
    this.endpointKeys = endpointKeys;
    this.file = database.label;
    this.instanceId = database.instanceId;
    this.#ctx = {
      pool: database.pool,
      db: database.db,
      target,
      instanceId: database.instanceId,
      bounds: database.bounds,
      locks: new Map<number, HeldRunLock>(),
    };
    this.#port = pgSqlPort(database.pool, { prepare: true });
  }

  /** The notification rows of the outbox, for the notification worker. */
  notificationOutbox(): NotificationRows {
    return new PortNotificationOutbox(pgOutboxPort(this.#ctx.pool));
  }

  /** Frees any run lock still held and closes the pool. */
  async close(): Promise<void> {
    const held = [...this.#ctx.locks.values()];
    this.#ctx.locks.clear();
    await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
    await this.#database.close();
  }

  /** Every failure of an operation as a MirrorError (DB_ERROR saying what to check, never the password). */
  #guard<A extends unknown[], R>(operation: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return (...args) =>
      operation(...args).catch((error: unknown) => {
        throw operationError(error, this.#ctx.target, this.#ctx.bounds);
      });
  }

  // Runs
  beginRun: Op<'beginRun'> = this.#guard(
    (upstream: string, start: RunStart = COMMAND_START, now: Date = new Date()) =>
      runs.beginRun(this.#ctx, upstream, start, now),
  );
  runOfTick: Op<'runOfTick'> = this.#guard((tick) => records.runOfTick(this.#port, tick));
  latestRunStart: Op<'latestRunStart'> = this.#guard(() => runReads.latestRunStart(this.#port));
  heartbeat: Op<'heartbeat'> = this.#guard((runId, at) => records.heartbeat(this.#port, runId, at));
  endRun: Op<'endRun'> = this.#guard((end) => endRun(this.#ctx, end));
  openStage: Op<'openStage'> = this.#guard(async (runId) =>
    guardedStage(await openPgStage(this.#ctx, runId), (error) =>
      operationError(error, this.#ctx.target, this.#ctx.bounds),
    ),
  );
  releaseRun: Op<'releaseRun'> = this.#guard((runId) => runs.releaseRun(this.#ctx, runId));
  recordRebind: Op<'recordRebind'> = this.#guard((runId, from) =>
    records.recordRebind(this.#port, runId, from),
  );
  recordFailedRun: Op<'recordFailedRun'> = this.#guard((run) => records.recordFailedRun(this.#port, run));
  recoverDeadRuns: Op<'recoverDeadRuns'> = this.#guard(() => runs.recoverDeadRuns(this.#ctx));
  listRuns: Op<'listRuns'> = this.#guard(async (options) =>
    runs.asSeen(this.#ctx, await runReads.runRows(this.#port, options)),
  );
  countRuns: Op<'countRuns'> = this.#guard(() => runReads.countRuns(this.#port));
  runCounts: Op<'runCounts'> = this.#guard(() => runReads.runCounts(this.#port));
  getRun: Op<'getRun'> = this.#guard(async (id) => {
    const run = await runReads.runById(this.#port, id);
    return run && (await runs.asSeen(this.#ctx, [run]))[0];
  });
  latestSucceededRun: Op<'latestSucceededRun'> = this.#guard((asOf) =>
    runReads.latestSucceededRun(this.#port, asOf),
  );
  latestSucceededRunId: Op<'latestSucceededRunId'> = this.#guard(() =>
    runReads.latestSucceededRunId(this.#port),
  );
  previousRun: Op<'previousRun'> = this.#guard((runId) => runReads.previousRun(this.#port, runId));
  refusalStreakStart: Op<'refusalStreakStart'> = this.#guard((runId, code, entries) =>
    refusalStreakStart(this.#port, runId, code, entries),
  );
  succeededRunTimes: Op<'succeededRunTimes'> = this.#guard((limit) =>
    runReads.succeededRunTimes(this.#port, limit),
  );
  runFinishTimes: Op<'runFinishTimes'> = this.#guard((ids) => runReads.runFinishTimes(this.#port, ids));

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
    changeBatches(this.listChanges, filter, batchSize);
  changesWithSubjects: Op<'changesWithSubjects'> = (filter, batchSize) =>
    changes.changesWithSubjects(this.#port, this.changeSubjects, filter, batchSize);
  changeIdAt: Op<'changeIdAt'> = this.#guard((filter, offset) =>
    changes.changeIdAt(this.#port, filter, offset),
  );
  changeLines: Op<'changeLines'> = this.#guard((filter) => changes.changeLines(this.#port, filter));
  changedFields: Op<'changedFields'> = this.#guard(() => historyReads.changedFields(this.#port));
  getCoworker: Op<'getCoworker'> = this.#guard((uuid) => historyReads.getCoworker(this.#port, uuid));
  coworkerHistory: Op<'coworkerHistory'> = this.#guard((uuid) =>
    historyReads.coworkerHistory(this.#port, uuid),
  );
  currentVersions: Op<'currentVersions'> = this.#guard((uuid) =>
    historyReads.currentVersions(this.#port, uuid),
  );
  listCoworkers: Op<'listCoworkers'> = this.#guard((options) =>
    historyReads.listCoworkers(this.#port, options),
  );
  countCoworkers: Op<'countCoworkers'> = this.#guard((includeRemoved) =>
    historyReads.countCoworkers(this.#port, includeRemoved),
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
    const dropped = await mediaReads.dropMediaUnusedSince(pgTransactionPort(this.#ctx.pool), cutoff);
    if (dropped.length > 0) await announceMediaDropped(this.#ctx.pool);
    return dropped;
  });
  mediaShasAt: Op<'mediaShasAt'> = this.#guard((runId) => mediaReads.mediaShasAt(this.#port, runId));
  keptBlob: Op<'keptBlob'> = this.#guard((sha256) => mediaReads.keptBlob(this.#port, sha256));
  mediaFigures: Op<'mediaFigures'> = this.#guard(() => mediaReads.mediaFigures(this.#port));
  hasStoredMedia: Op<'hasStoredMedia'> = this.#guard(() => mediaReads.hasStoredMedia(this.#port));
  mediaRunsByIds: Op<'mediaRunsByIds'> = this.#guard((runIds) =>
    mediaReads.mediaRunsByIds(this.#port, runIds),
  );
  mediaFailuresOf: Op<'mediaFailuresOf'> = this.#guard((runId, limit) =>
    mediaFailuresOf(this.#port, runId, limit),
  );

  // Identity
  identityValue: Op<'identityValue'> = this.#guard((name, fresh) => identityValue(this.#port, name, fresh));

  // Blobs: every mirrored file's bytes, so any instance serves any file (media-blobs.ts).
  readonly holdsBlobs = true;
  putBlob: Op<'putBlob'> = this.#guard((sha256, path) => blobs.putBlob(this.#ctx, sha256, path));
  openBlob: Op<'openBlob'> = this.#guard((sha256, span) => blobs.openBlob(this.#ctx, sha256, span));
  droppedBlobs: Op<'droppedBlobs'> = this.#guard(() => blobs.droppedBlobs(this.#ctx));
  keptBlobsWithoutBytes: Op<'keptBlobsWithoutBytes'> = this.#guard(() =>
    blobs.keptBlobsWithoutBytes(this.#ctx),
  );
  dropUnreferencedBlobs: Op<'dropUnreferencedBlobs'> = this.#guard(() =>
    blobs.dropUnreferencedBlobs(this.#ctx),
  );

  // Deliveries
  claimDue: Op<'claimDue'> = this.#guard((options) => outbox.claimDue(pgOutboxPort(this.#ctx.pool), options));
  recordAttempt: Op<'recordAttempt'> = this.#guard((claim, result, outcome) =>
    outbox.recordAttempt(pgOutboxPort(this.#ctx.pool), claim, result, outcome),
  );
  releaseLease: Op<'releaseLease'> = this.#guard((claim, token) =>
    outbox.releaseLease(pgOutboxPort(this.#ctx.pool), claim, token),
  );
  redeliver: Op<'redeliver'> = this.#guard((id) => outbox.redeliver(pgOutboxPort(this.#ctx.pool), id));
  enableEndpoint: Op<'enableEndpoint'> = this.#guard((endpointId) =>
    outbox.enableEndpoint(pgOutboxPort(this.#ctx.pool), endpointId),
  );
  pendingDeliveries: Op<'pendingDeliveries'> = this.#guard((urls) =>
    outbox.pendingDeliveries(pgOutboxPort(this.#ctx.pool), urls),
  );
  listDeliveries: Op<'listDeliveries'> = this.#guard((filter) =>
    outbox.listDeliveries(pgOutboxPort(this.#ctx.pool), filter),
  );
  countDeliveries: Op<'countDeliveries'> = this.#guard((filter) =>
    outbox.countDeliveries(pgOutboxPort(this.#ctx.pool), filter),
  );
  getDelivery: Op<'getDelivery'> = this.#guard((id) => outbox.getDelivery(pgOutboxPort(this.#ctx.pool), id));
  deliveryFigures: Op<'deliveryFigures'> = this.#guard(() =>
    outbox.deliveryFigures(pgOutboxPort(this.#ctx.pool)),
  );
  disabledNotifyTargets: Op<'disabledNotifyTargets'> = this.#guard(() =>
    outbox.disabledNotifyTargets(pgOutboxPort(this.#ctx.pool)),
  );
  enableNotifyTargets: Op<'enableNotifyTargets'> = this.#guard((targetId) =>
    outbox.enableNotifyTargets(pgOutboxPort(this.#ctx.pool), targetId),
  );

  // Prune
  prune: Op<'prune'> = this.#guard((request) => prunePg(this.#ctx, request));
  pruneHorizon: Op<'pruneHorizon'> = this.#guard(() => readHorizon(this.#port));

  // Watch
  /** LISTEN on a connection of its own; run commits NOTIFY inside their transaction. */
  #commitWatch: SharedCommitWatch | null = null;
  watchCommits: Op<'watchCommits'> = (onCommit, options) =>
    (this.#commitWatch ??= new SharedCommitWatch(this.#ctx.target, this.#ctx.instanceId)).watch(
      onCommit,
      options,
    );

  // Health
  /** No file to watch: a networked database's problems are `databaseProblem`'s. */
  storageProblem: Op<'storageProblem'> = () => null;
  /** SQLite's quick_check has no PostgreSQL twin here: the server checks its own pages. */
  readonly integrityTarget = null;
  readonly readerTarget = null;
  /**
   * Null when the database answers, else one line saying what to check (never the password). On the
   * health checks' own pool: a held lock or a server that stopped answering is said within
   * DATABASE_PROBE_TIMEOUT, and a check never waits behind reads for a connection.
   */
  databaseProblem: Op<'databaseProblem'> = async () => {
    try {
      await one(this.#database.probePool(), 'select 1 from runs limit 1');
      return null;
    } catch (error) {
      const { target } = this.#ctx;
      return (timeoutError(error, target, this.#database.probeBounds) ?? connectionError(error, target))
        .message;
    }
  };
}

/**
 * Opens the PostgreSQL store: a bounded pool, the committed migrations applied (serialised across
 * instances). A database that cannot be reached is a DB_ERROR (exit 8) naming the masked URL.
 */
export async function openPgStore(
  target: PostgresTarget,
  options: {
    poolMax?: number;
    instanceId?: string;
    logger?: Logger;
    /** What the store's sessions are for: a sync's wait longer for locks and statements than a read's. */
    purpose?: 'read' | 'sync';
    deadlines?: Partial<DatabaseDeadlines>;
  },
): Promise<PgStore> {
  const database = await openPostgres({
    target,
    ...(options.poolMax === undefined ? {} : { poolMax: options.poolMax }),
    purpose: options.purpose ?? 'read',
    deadlines: deadlinesOf(options.deadlines ?? {}),
    instanceId: options.instanceId ?? newInstanceId(),
    logger: options.logger ?? silentLogger(),
  });
  try {
    // The outbox's endpoint ids are keyed under the database's own key; a database without one yet
    // gets it, and the ids written before it are re-keyed.
    const keys = await endpointKeysOver(pgTransactionPort(database.pool));
    return new PgStore(database, target, keys);
  } catch (cause) {
    await database.close();
    throw operationError(cause, target, database.bounds);
  }
}
