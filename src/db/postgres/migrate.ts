import type pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate as drizzleMigrate } from 'drizzle-orm/node-postgres/migrator';
import { MirrorError } from '../../errors.js';
import { migrationsFolder, standingOf, type SchemaStanding } from '../migration-files.js';
import { newerSchemaError } from '../migration-times.js';
import { ADVISORY_NAMESPACE, MIGRATION_LOCK } from './advisory-keys.js';

/** How long an instance waits for another one's migration before it gives up. */
export const MIGRATION_WAIT_MS = 120_000;

/** One connection of its own: a pool's client or a lone client. */
export type Session = pg.PoolClient | pg.Client;

/** drizzle's bookkeeping, where its node-postgres migrator keeps it. */
const BOOKKEEPING = 'drizzle.__drizzle_migrations';

/** Where the database's schema stands against this build's migrations/postgres/. */
export async function postgresSchemaStanding(client: Session): Promise<SchemaStanding> {
  const table = await client.query<{ name: string | null }>(
    `select to_regclass('${BOOKKEEPING}')::text as name`,
  );
  if (table.rows[0]?.name == null) return standingOf('postgres', 0);
  const { rows } = await client.query<{ last: string | null }>(
    `select max(created_at)::text as last from ${BOOKKEEPING}`,
  );
  return standingOf('postgres', Number(rows[0]?.last ?? 0));
}

async function takeMigrationLock(client: Session, label: string, waitMs: number): Promise<void> {
  // lock_timeout bounds the wait for an advisory lock too; it is this session's alone and reset after.
  await client.query(`select set_config('lock_timeout', $1, false)`, [`${waitMs}ms`]);
  try {
    await client.query('select pg_advisory_lock($1, $2)', [ADVISORY_NAMESPACE, MIGRATION_LOCK]);
  } catch (cause) {
    if ((cause as { code?: unknown }).code !== '55P03') throw cause;
    throw new MirrorError(
      'DB_ERROR',
      `another instance has been migrating ${label} for over ${waitMs / 1000} s; see who in pg_stat_activity ` +
        "(application_name like 'coworker-mirror%'), then start again",
      { database: label, waitMs },
      { cause },
    );
  } finally {
    await client.query('reset lock_timeout');
  }
}

/**
 * Applies migrations/postgres/ with drizzle's migrator, serialised across instances by a
 * session-level advisory lock: instances starting together migrate once, the others wait, then
 * find nothing to do and go on. A database a newer version migrated is refused before anything is
 * written. Runs on one dedicated client: the lock belongs to its session. Returns how many applied.
 */
export async function migratePostgres(
  client: Session,
  label: string,
  waitMs = MIGRATION_WAIT_MS,
): Promise<{ applied: number }> {
  await takeMigrationLock(client, label, waitMs);
  try {
    const standing = await postgresSchemaStanding(client);
    if (standing.newer) throw newerSchemaError(label, 'DATABASE_URL', { database: label });
    if (standing.pending > 0) {
      await drizzleMigrate(drizzle({ client }), { migrationsFolder: migrationsFolder('postgres') });
    }
    return { applied: standing.pending };
  } catch (cause) {
    if (cause instanceof MirrorError) throw cause;
    throw new MirrorError(
      'DB_ERROR',
      `database migration failed on ${label}: ${(cause as Error).message}`,
      { database: label, migrationsFolder: migrationsFolder('postgres') },
      { cause },
    );
  } finally {
    // When this fails the connection is gone, and the lock went with its session; the error that
    // matters is the one above (or the next query's).
    await client
      .query('select pg_advisory_unlock($1, $2)', [ADVISORY_NAMESPACE, MIGRATION_LOCK])
      .catch(() => undefined);
  }
}

/** Refuses a database a newer version migrated, without migrating (read-only commands). */
export async function refuseNewerPostgres(client: Session, label: string): Promise<SchemaStanding> {
  const standing = await postgresSchemaStanding(client);
  if (standing.newer) throw newerSchemaError(label, 'DATABASE_URL', { database: label });
  return standing;
}
