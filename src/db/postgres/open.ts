import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { DEFAULT_POOL_MAX, type PostgresTarget } from '../../config/database-url.js';
import type { Logger } from '../../logger.js';
import { connectionError } from './errors.js';
import { migratePostgres, refuseNewerPostgres } from './migrate.js';
import * as schema from './schema.js';

export type PostgresDb = NodePgDatabase<typeof schema>;

export interface PostgresOpenOptions {
  target: PostgresTarget;
  /** DATABASE_POOL_MAX: connections this process opens at most (the run lock's own is not one of them). */
  poolMax?: number;
  /** Names this process in pg_stat_activity (application_name): who holds a lock is read from there. */
  instanceId?: string;
  /** Apply pending migrations (default true); false only checks the database is not newer. */
  migrate?: boolean;
  logger: Logger;
}

export interface PostgresDatabase {
  readonly db: PostgresDb;
  readonly pool: pg.Pool;
  /** The database as it may be shown: the URL with its password masked. */
  readonly label: string;
  readonly instanceId: string;
  /** Pending migrations applied by this open (0 when another instance had applied them). */
  readonly migrationsApplied: number;
  close(): Promise<void>;
}

/** This process, as other instances see it: host, pid and a random part (a restarted container reuses pids). */
export function newInstanceId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
}

/** PostgreSQL keeps at most 63 bytes of an application_name. */
export function applicationName(instanceId: string): string {
  return Buffer.from(`coworker-mirror ${instanceId}`, 'utf8')
    .subarray(0, 63)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

/** The pool's settings for pg: the connection string (password included) and the bounds. */
export function poolConfig(target: PostgresTarget, max: number, instanceId: string): pg.PoolConfig {
  return {
    connectionString: target.connectionString,
    max,
    connectionTimeoutMillis: target.connectTimeoutMs,
    application_name: applicationName(instanceId),
    // A connection the pool keeps idle is closed after this; the next query opens another.
    idleTimeoutMillis: 30_000,
  };
}

/**
 * Opens a pool on the mirror's PostgreSQL database, checks it answers, then applies the committed
 * migrations (serialised across instances) or, with `migrate: false`, refuses a newer database.
 * A failure to connect is a DB_ERROR (exit 8) saying what to check, never showing the password.
 */
export async function openPostgres(options: PostgresOpenOptions): Promise<PostgresDatabase> {
  const { target, logger } = options;
  const instanceId = options.instanceId ?? newInstanceId();
  const pool = new pg.Pool(poolConfig(target, options.poolMax ?? DEFAULT_POOL_MAX, instanceId));
  // An idle connection the server drops (restart, idle timeout) is an event, not a crash: the pool
  // discards it and the next query connects again.
  pool.on('error', (err) => {
    logger.warn(
      { err: connectionError(err, target), database: target.label },
      'postgres idle connection lost',
    );
  });
  let migrationsApplied = 0;
  try {
    const client = await pool.connect().catch((cause: unknown) => {
      throw connectionError(cause, target);
    });
    try {
      if (options.migrate ?? true) {
        migrationsApplied = (await migratePostgres(client, target.label)).applied;
      } else {
        await refuseNewerPostgres(client, target.label);
      }
      client.release();
    } catch (cause) {
      // A client that failed mid-way may hold a half-done session: it is closed, not reused.
      client.release(true);
      throw connectionError(cause, target);
    }
  } catch (cause) {
    await pool.end();
    throw cause;
  }
  if (migrationsApplied > 0) logger.info({ database: target.label, migrationsApplied }, 'postgres migrated');
  return {
    db: drizzle({ client: pool, schema }),
    pool,
    label: target.label,
    instanceId,
    migrationsApplied,
    close: () => pool.end(),
  };
}
