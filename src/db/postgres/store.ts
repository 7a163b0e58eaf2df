import { deadlinesOf, type DatabaseDeadlines } from '../../config/database-deadlines.js';
import type { PostgresTarget } from '../../config/database-url.js';
import { silentLogger, type Logger } from '../../logger.js';
import type { PgContext } from './context.js';
import { connectionError, operationError, timeoutError } from './errors.js';
import * as blobs from './media-blobs.js';
import { newInstanceId, openPostgres, type PostgresDatabase } from './open.js';
import { endpointKeysOver } from '../endpoint-keying.js';
import type { EndpointKeys } from '../endpoint-keys.js';
import { PortStore, type StoreDialect } from '../port-store.js';
import { announce, SharedCommitWatch } from './commit-watch.js';
import { prunePg } from './prune.js';
import { openPgStage } from './stage.js';
import * as runs from './runs.js';
import type { HeldRunLock } from './run-lock.js';
import { query } from './sql.js';
import { pgOutboxPort, pgSqlPort, pgTransactionPort } from './sql-port.js';

/**
 * PostgreSQL under the one store: a pooled connection, each operation one query or one transaction;
 * the run lock is a session advisory lock, the database holds the media bytes, commits are
 * announced (LISTEN/NOTIFY), and every failure is a DB_ERROR saying what to check.
 */
function pgDialect(
  database: PostgresDatabase,
  target: PostgresTarget,
  endpointKeys: EndpointKeys,
): StoreDialect {
  const ctx: PgContext = { ...database, target, locks: new Map<number, HeldRunLock>() };
  const mapError = (error: unknown): unknown => operationError(error, target, database.bounds);
  /** LISTEN on a connection of its own, opened at the first watch; run commits NOTIFY inside their transaction. */
  let commitWatch: SharedCommitWatch | null = null;
  const writes = pgTransactionPort(database.pool);
  return {
    // Statements prepared: the reads run again and again.
    port: pgSqlPort(database.pool, { prepare: true }),
    writes,
    outbox: pgOutboxPort(database.pool),
    endpointKeys,
    mapError,
    beginRun: (upstream, start, now) => runs.beginRun(ctx, upstream, start, now),
    releaseRun: (runId) => runs.releaseRun(ctx, runId),
    recoverDeadRuns: () => runs.recoverDeadRuns(ctx),
    asSeen: (list) => runs.asSeen(ctx, list),
    openStage: (runId) => openPgStage(ctx, runId),
    mediaDropped: () => announce(ctx.pool, 'media'),
    // Blobs: every mirrored file's bytes, so any instance serves any file (media-blobs.ts).
    holdsBlobs: true,
    putBlob: (sha256, path) => blobs.putBlob(ctx, sha256, path),
    openBlob: (sha256, span) => blobs.openBlob(ctx, sha256, span),
    droppedBlobs: () => blobs.droppedBlobs(ctx),
    keptBlobsWithoutBytes: () => blobs.keptBlobsWithoutBytes(ctx),
    dropUnreferencedBlobs: () => blobs.dropUnreferencedBlobs(ctx),
    prune: (request) => prunePg(ctx, request),
    watchCommits: (onCommit, options) =>
      (commitWatch ??= new SharedCommitWatch(target, ctx.instanceId)).watch(onCommit, options),
    /** The database as it may be shown: its URL with the password masked. */
    file: database.label,
    databaseProblem: () => databaseProblem(database, target),
    /** No file to watch: a networked database's problems are `databaseProblem`'s. */
    storageProblem: () => null,
    /** SQLite's quick_check has no PostgreSQL twin here: the server checks its own pages. */
    integrityTarget: null,
    readerTarget: null,
    /** Frees any run lock still held and closes the pool. */
    close: async () => {
      const held = [...ctx.locks.values()];
      ctx.locks.clear();
      await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
      await database.close();
    },
  };
}

/**
 * Null when the database answers, else one line saying what to check (never the password). On the
 * health checks' own pool: a held lock or a server that stopped answering is said within
 * DATABASE_PROBE_TIMEOUT, and a check never waits behind reads for a connection.
 */
async function databaseProblem(database: PostgresDatabase, target: PostgresTarget): Promise<string | null> {
  try {
    await query(database.probePool(), 'select 1 from runs limit 1');
    return null;
  } catch (error) {
    return (timeoutError(error, target, database.probeBounds) ?? connectionError(error, target)).message;
  }
}

/** The one store over a PostgreSQL pool, and the instance it speaks for. */
export class PgStore extends PortStore {
  readonly instanceId: string;
  declare readonly close: () => Promise<void>;

  constructor(database: PostgresDatabase, target: PostgresTarget, endpointKeys: EndpointKeys) {
    super(pgDialect(database, target, endpointKeys));
    this.instanceId = database.instanceId;
  }
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
