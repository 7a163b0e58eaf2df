import pgLib from 'pg';
import { describe, expect, it } from 'vitest';
import { ADVISORY_NAMESPACE, MIGRATION_LOCK } from '../../../src/db/postgres/advisory-keys.js';
import { migratePostgres } from '../../../src/db/postgres/migrate.js';
import { parsePostgresUrl, type PostgresTarget } from '../../../src/config/database-url.js';
import { knownMigrations } from '../../../src/db/migration-files.js';
import { openPostgres, type PostgresDatabase } from '../../../src/db/postgres/open.js';
import { tempDatabase } from '../../helpers/temp-db.js';
import { MirrorError } from '../../../src/errors.js';
import { exitCodeFor } from '../../../src/cli/exit-codes.js';
import { silentLogger } from '../../../src/logger.js';
import { freePort, describePostgres, usePostgres } from '../../helpers/postgres.js';

function target(url: string): PostgresTarget {
  const parsed = parsePostgresUrl(url);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

async function failure(promise: Promise<unknown>): Promise<MirrorError> {
  const error = await promise.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  if (!(error instanceof MirrorError)) throw error;
  return error;
}

const open = (url: string, options: { migrate?: boolean } = {}) =>
  openPostgres({ target: target(url), logger: silentLogger(), ...options });

async function closeAll(stores: PostgresDatabase[]): Promise<void> {
  await Promise.all(stores.map((s) => s.close()));
}

// On SQLite the media folder holds the files; on PostgreSQL the database holds them too, so that any
// instance serves them: the one table only one dialect has.
const POSTGRES_ONLY_TABLES = ['media_blob_chunks'];

describePostgres('PostgreSQL', () => {
  const pg = usePostgres();

  describe('opening and migrating', () => {
    it('applies the migrations on a fresh database: the same tables and columns as SQLite', async () => {
      const store = await open(pg.url);
      try {
        expect(store.migrationsApplied).toBe(knownMigrations('postgres').length);
        const { rows } = await store.pool.query<{ table_name: string; column_name: string }>(
          `select table_name, column_name from information_schema.columns
         where table_schema = 'public' and table_name <> ALL($1) order by table_name, column_name`,
          [POSTGRES_ONLY_TABLES],
        );
        const sqlite = tempDatabase().sqlite;
        const sqliteColumns = sqlite
          .prepare(
            `select m.name as table_name, c.name as column_name from sqlite_master m, pragma_table_info(m.name) c
           where m.type = 'table' and m.name not like 'sqlite_%' and m.name != '__drizzle_migrations'
           order by 1, 2`,
          )
          .all();
        expect(rows).toEqual(sqliteColumns);
      } finally {
        await store.close();
      }
    });

    it('has the same indexes as SQLite, by name', async () => {
      const store = await open(pg.url);
      try {
        const { rows } = await store.pool.query<{ name: string }>(
          `select indexname as name from pg_indexes where schemaname = 'public' and indexname not like '%_pkey'
             and tablename <> ALL($1) order by 1`,
          [POSTGRES_ONLY_TABLES],
        );
        const sqlite = tempDatabase().sqlite;
        const sqliteIndexes = sqlite
          .prepare(
            `select name from sqlite_master where type = 'index' and name not like 'sqlite_autoindex_%' order by 1`,
          )
          .all();
        expect(rows).toEqual(sqliteIndexes);
      } finally {
        await store.close();
      }
    });

    it('orders text as SQLite does (byte by byte) even in a database created with a locale', async () => {
      const database = `icu_${Date.now()}`;
      await pg.server
        .admin()
        .query(`create database ${database} locale_provider icu icu_locale 'en-US' template template0`);
      const store = await open(pg.server.url(database));
      const fields = ['a_b', 'ab', 'B', 'a', 'Z', 'a-c', 'é', 'e'];
      const insert = [
        `insert into runs (status, started_at, upstream) values ('succeeded', '2026-01-01T00:00:00.000Z', 'http://upstream.invalid')`,
        ...fields.map(
          (f) =>
            `insert into changes (run_id, uuid, slot, kind, field) values (1, 'u', 0, 'changed', '${f}')`,
        ),
      ];
      const ordered = 'select field from changes order by field';
      try {
        for (const statement of insert) await store.pool.query(statement);
        const sqlite = tempDatabase().sqlite;
        for (const statement of insert) sqlite.prepare(statement).run();
        const { rows } = await store.pool.query<{ field: string }>(ordered);
        expect(rows).toEqual(sqlite.prepare(ordered).all());
        expect(rows.map((r) => r.field)).toEqual(['B', 'Z', 'a', 'a-c', 'a_b', 'ab', 'e', 'é']);
      } finally {
        await store.close();
      }
    });

    it('opens at most DATABASE_POOL_MAX connections', async () => {
      const store = await openPostgres({ target: target(pg.url), logger: silentLogger(), poolMax: 2 });
      try {
        const pids = await Promise.all(
          Array.from({ length: 6 }, () =>
            store.pool.query<{ pid: number }>('select pg_backend_pid() as pid from pg_sleep(0.05)'),
          ),
        );
        expect(new Set(pids.map((r) => r.rows[0]?.pid)).size).toBeLessThanOrEqual(2);
      } finally {
        await store.close();
      }
    });

    it('two instances starting together migrate once; the other waits and goes on', async () => {
      const url = pg.server.url(await pg.server.createDatabase());
      const stores = await Promise.all([open(url), open(url), open(url)]);
      try {
        expect(stores.map((s) => s.migrationsApplied).sort()).toEqual([
          0,
          0,
          knownMigrations('postgres').length,
        ]);
        const { rows } = await stores[0].pool.query(
          'select hash, created_at::float8 as at from drizzle.__drizzle_migrations',
        );
        expect(rows).toEqual(knownMigrations('postgres').map((m) => ({ hash: m.hash, at: m.folderMillis })));
      } finally {
        await closeAll(stores);
      }
    });

    it('gives up waiting for a migration another instance holds too long, saying where to look', async () => {
      const database = await pg.server.createDatabase();
      const other = await pg.server.admin(database).connect();
      try {
        await other.query('select pg_advisory_lock($1, $2)', [ADVISORY_NAMESPACE, MIGRATION_LOCK]);
        const client = new pgLib.Client({ connectionString: pg.server.url(database) });
        await client.connect();
        const label = target(pg.server.url(database)).label;
        const error = await failure(migratePostgres(client, label, 200)).finally(() => client.end());
        expect(error.code).toBe('DB_ERROR');
        expect(error.message).toBe(
          `another instance has been migrating ${label} for over 0.2 s; see who in pg_stat_activity ` +
            "(application_name like 'coworker-mirror%'), then start again",
        );
      } finally {
        other.release(true);
      }
    });

    it('a second open of a migrated database applies nothing', async () => {
      const first = await open(pg.url);
      await first.close();
      const again = await open(pg.url);
      await again.close();
      expect([first.migrationsApplied, again.migrationsApplied]).toEqual([0, 0]);
    });

    it('refuses a database a newer version migrated, and changes nothing', async () => {
      const url = pg.server.url(await pg.server.createDatabase());
      await (await open(url)).close();
      const admin = pg.server.admin(new URL(url).pathname.slice(1));
      await admin.query(
        `insert into drizzle.__drizzle_migrations (hash, created_at) values ('from-the-future', 9e12)`,
      );
      const before = await admin.query('select count(*)::int as n from drizzle.__drizzle_migrations');
      for (const migrate of [true, false]) {
        const error = await failure(open(url, { migrate }));
        expect(error.code).toBe('DB_TOO_NEW');
        expect(error.message).toBe(
          `database ${url.replace(/:[^:@]*@/, ':***@')} was written by a newer version of coworker-mirror (it holds a ` +
            'migration this build does not know); nothing was changed. Run the newer version, or point DATABASE_URL at another database',
        );
      }
      expect((await admin.query('select count(*)::int as n from drizzle.__drizzle_migrations')).rows).toEqual(
        before.rows,
      );
    });
  });

  describe('connection errors say what to check, never the password', () => {
    const cases = [
      {
        name: 'a wrong password',
        url: () => pg.server.url(pg.database, { password: 'not-the-password' }),
        says: () =>
          `cannot connect to PostgreSQL at postgres://postgres:***@127.0.0.1:${pg.server.port}/${pg.database}: ` +
          'PostgreSQL refused the password of user "postgres": check the user and password of DATABASE_URL',
      },
      {
        name: 'a port nothing listens on',
        url: async () => pg.server.url(pg.database, { port: await freePort() }),
        says: (url: string) =>
          `cannot connect to PostgreSQL at ${url.replace(/:[^:@]*@/, ':***@')}: nothing accepts connections at ` +
          `127.0.0.1:${new URL(url).port}: check that PostgreSQL runs there and the host and port of DATABASE_URL`,
      },
      {
        name: 'a database that does not exist',
        url: () => pg.server.url('no_such_db'),
        says: () =>
          `cannot connect to PostgreSQL at postgres://postgres:***@127.0.0.1:${pg.server.port}/no_such_db: the database ` +
          `"no_such_db" does not exist on 127.0.0.1:${pg.server.port}: create it (createdb no_such_db) or fix the database name in DATABASE_URL`,
      },
    ];

    it.each(cases)('$name', async ({ url: makeUrl, says }) => {
      const url = await makeUrl();
      const error = await failure(open(url));
      expect(error.code).toBe('DB_ERROR');
      expect(exitCodeFor(error.code)).toBe(8);
      expect(error.message).toBe(says(url));
      expect(JSON.stringify(error.details)).not.toContain(pg.server.password);
      expect(error.message).not.toContain(pg.server.password);
      expect(error.message).not.toContain('not-the-password');
    });
  });
});
