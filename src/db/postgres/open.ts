import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { defaultDeadlines, type DatabaseDeadlines } from '../../config/database-deadlines.js';
import { DEFAULT_POOL_MAX, type PostgresTarget } from '../../config/database-url.js';
import type { Logger } from '../../logger.js';
import { connectionError } from './errors.js';
import { migratePostgres, refuseNewerPostgres } from './migrate.js';
import {
  endClient,
  endWithin,
  sessionBounds,
  sessionSettings,
  type SessionBounds,
} from './session-bounds.js';

export interface PostgresOpenOptions {
  target: PostgresTarget;
  /** DATABASE_POOL_MAX: connections this process opens at most (the run lock's own is not one of them). */
  poolMax?: number;
  /** What the pool's sessions are for, and so their bounds (a read's unless told). */
  purpose?: 'read' | 'sync';
  /** DATABASE_PROBE_TIMEOUT and the others; the settings' defaults unless told. */
  deadlines?: DatabaseDeadlines;
  /** Names this process in pg_stat_activity (application_name): who holds a lock is read from there. */
  instanceId?: string;
  /** Apply pending migrations (default true); false only checks the database is not newer. */
  migrate?: boolean;
  logger: Logger;
}

export interface PostgresDatabase {
  readonly pool: pg.Pool;
  /** The database as it may be shown: the URL with its password masked. */
  readonly label: string;
  readonly instanceId: string;
  /** The bounds of the pool's sessions, and of the connections a run opens of its own. */
  readonly bounds: SessionBounds;
  /**
   * The health checks' own small pool, opened at the first check, with their short bounds: a check
   * neither waits behind reads for a connection nor longer than DATABASE_PROBE_TIMEOUT for an answer.
   */
  probePool(): pg.Pool;
  /** The bounds of the health checks' sessions. */
  readonly probeBounds: SessionBounds;
  /** Pending migrations applied by this open (0 when another instance had applied them). */
  readonly migrationsApplied: number;
  close(): Promise<void>;
}

/** Health checks at once: /readyz and a scrape of /metrics. */
const PROBE_POOL_MAX = 2;

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

/**
 * One connection's settings: the connection string (password included), its name and its bounds.
 * A connection is waited for no longer than the URL's connect_timeout, nor than the bounds allow (a
 * health check's pool waits no longer than its deadline).
 */
function clientConfig(
  target: PostgresTarget,
  instanceId: string,
  bounds: SessionBounds | null,
): pg.ClientConfig {
  // The URL's connect_timeout (0: none), shortened to what the bounds allow.
  const url = target.connectTimeoutMs;
  const bound = bounds?.connectTimeoutMs ?? null;
  return {
    connectionString: target.connectionString,
    connectionTimeoutMillis: bound === null ? url : url === 0 ? bound : Math.min(url, bound),
    application_name: applicationName(instanceId),
    ...(bounds === null ? {} : sessionSettings(bounds)),
  };
}

/**
 * A connection outside the pool, for a session held from start to end (a run's lock and stage, the
 * commit listener). An error event on it is the caller's to handle; a query in flight rejects with it.
 */
export function ownClient(
  target: PostgresTarget,
  instanceId: string,
  bounds: SessionBounds | null,
): pg.Client {
  return new pg.Client({
    ...clientConfig(target, instanceId, bounds),
    // A holder on a dead link learns it within about a minute rather than the OS's two hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
}

/**
 * Opens a pool on the mirror's PostgreSQL database, checks it answers, then applies the committed
 * migrations (serialised across instances) or, with `migrate: false`, refuses a newer database.
 * A failure to connect is a DB_ERROR (exit 8) saying what to check, never showing the password.
 */
export async function openPostgres(options: PostgresOpenOptions): Promise<PostgresDatabase> {
  const { target, logger } = options;
  const instanceId = options.instanceId ?? newInstanceId();
  const deadlines = options.deadlines ?? defaultDeadlines();
  const bounds = sessionBounds(options.purpose ?? 'read', deadlines);
  const open = (max: number, of: SessionBounds) => {
    // A connection the pool keeps idle is closed after idleTimeoutMillis; the next query opens another.
    const opened = new pg.Pool({ ...clientConfig(target, instanceId, of), max, idleTimeoutMillis: 30_000 });
    // An idle connection the server drops (restart, idle timeout) is an event, not a crash: the pool
    // discards it and the next query connects again.
    opened.on('error', (err) => {
      logger.warn(
        { err: connectionError(err, target), database: target.label },
        'postgres idle connection lost',
      );
    });
    // Its connections as they open and close, so a close can drop those a stopped server keeps.
    const clients = new Set<pg.Client>();
    opened.on('connect', (client) => clients.add(client as pg.Client));
    opened.on('remove', (client) => clients.delete(client as pg.Client));
    return { pool: opened, clients };
  };
  const main = open(options.poolMax ?? DEFAULT_POOL_MAX, bounds);
  let migrationsApplied = 0;
  try {
    migrationsApplied = await prepareSchema(options, instanceId);
  } catch (cause) {
    await main.pool.end();
    throw cause;
  }
  if (migrationsApplied > 0) logger.info({ database: target.label, migrationsApplied }, 'postgres migrated');
  const probeBounds = sessionBounds('probe', deadlines);
  let probe: ReturnType<typeof open> | null = null;
  let closed = false;
  return {
    pool: main.pool,
    label: target.label,
    instanceId,
    bounds,
    probeBounds,
    probePool: () => {
      if (closed) throw new Error(`the store on ${target.label} is closed`);
      return (probe ??= open(PROBE_POOL_MAX, probeBounds)).pool;
    },
    migrationsApplied,
    close: async () => {
      closed = true;
      // Past a short wait the sockets are dropped, so a command ends instead of waiting for a
      // stopped server to come back.
      await Promise.all(
        [main, ...(probe ? [probe] : [])].map((p) => endWithin(p.pool.end(), 2000, p.clients)),
      );
    },
  };
}

/**
 * Migrates (or checks the schema) on a connection of its own, outside the pool and its bounds: it
 * waits for another instance's migration (a bound of its own, MIGRATION_WAIT_MS), and a data
 * migration may rightly take longer than any read.
 */
async function prepareSchema(options: PostgresOpenOptions, instanceId: string): Promise<number> {
  const { target } = options;
  const client = new pg.Client(clientConfig(target, instanceId, null));
  // A session that fails mid-way rejects the query in flight; unheard, the event would end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    if (options.migrate ?? true) return (await migratePostgres(client, target.label)).applied;
    await refuseNewerPostgres(client, target.label);
    return 0;
  } catch (cause) {
    throw connectionError(cause, target);
  } finally {
    await endClient(client);
  }
}
