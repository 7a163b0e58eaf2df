import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { knownMigrations } from '../../src/db/migration-files.js';
import { openDatabase } from '../../src/db/open.js';
import { openPgStore } from '../../src/db/postgres/store.js';
import { historyOf } from '../fixtures/release-db/history-of.js';
import { describePostgres, pgTarget, usePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-db.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { bodyHash } from '../../src/sync/body-hash.js';

// The migrations since commit 982782f (change_time_from_run, changes_kind_idx_without_added,
// body_hash_66_bits, coworkers_removed_idx_partial, coworkers_without_rowid, coworker_times_from_runs) on a database that release wrote (test/fixtures/release-db/mirror-0.2.0.db,
// by write-release-db-2.ts): a change's time is read from its run, each version's hash is cut to the
// one a sync now computes, and the store answers the whole history as that release did
// (mirror-0.2.0.history.json: runs, changes by time and kind, each coworker, each run's listing;
// the versions' hashes, in no answer of the API, aside).

const FIXTURE = join(import.meta.dirname, '../fixtures/release-db/mirror-0.2.0.db');
const HISTORY = join(import.meta.dirname, '../fixtures/release-db/mirror-0.2.0.history.json');
const COPIED_TABLES = ['options_bodies', 'runs', 'coworkers', 'versions', 'listing_positions', 'changes'];
/** The PostgreSQL migrations the release had applied. */
const RELEASE_PG_MIGRATIONS = 5;

/** A history without the versions' hashes, which the migration cuts and no answer shows. */
const withoutHashes = (history: unknown): unknown =>
  JSON.parse(JSON.stringify(history, (key, value: unknown) => (key === 'bodyHash' ? undefined : value)));
/** Run columns added after the release: its runs read them as null (nobody recorded them then). */
const LATER_RUN_COLUMNS = { trigger: null, scheduledFor: null };
const releaseHistory = (): unknown => {
  const history = withoutHashes(JSON.parse(readFileSync(HISTORY, 'utf8'))) as { runs: object[] };
  return { ...history, runs: history.runs.map((run) => ({ ...run, ...LATER_RUN_COLUMNS })) };
};

describe('the migrations since 982782f on a database that release wrote (SQLite)', () => {
  it('answers the same history, with no time column nor time index on changes', async () => {
    const file = join(tempDir(), 'mirror.db');
    copyFileSync(FIXTURE, file);
    const store = openDatabase(file);
    onTestFinished(() => store.close());

    expect(withoutHashes(await historyOf(store))).toStrictEqual(releaseHistory());
    const columns = store.sqlite.prepare("select name from pragma_table_info('changes')").pluck().all();
    expect(columns).toStrictEqual([
      'id',
      'run_id',
      'uuid',
      'slot',
      'kind',
      'field',
      'old_value',
      'new_value',
      'version_id',
    ]);
    const indexes = store.sqlite
      .prepare("select name from sqlite_schema where type = 'index' and tbl_name = 'changes' order by name")
      .pluck()
      .all();
    const coworkersTable = store.sqlite
      .prepare("select sql from sqlite_schema where name = 'coworkers'")
      .pluck()
      .get() as string;
    expect(coworkersTable).toMatch(/\) WITHOUT ROWID$/);
    expect(store.sqlite.pragma('foreign_key_check')).toStrictEqual([]);
    expect(indexes).toStrictEqual([
      'changes_field_idx',
      'changes_kind_idx',
      'changes_run_idx',
      'changes_uuid_idx',
    ]);
  });
});

describe('migration body_hash_66_bits (SQLite)', () => {
  it('cuts every stored hash to the one a sync computes: the same listing again records nothing', async () => {
    const file = join(tempDir(), 'mirror.db');
    copyFileSync(FIXTURE, file);
    const store = openDatabase(file);
    onTestFinished(() => store.close());
    const versions = store.sqlite.prepare('select body, body_hash as hash from versions').all() as {
      body: string;
      hash: string;
    }[];
    expect(versions.length).toBeGreaterThan(20);
    expect(versions.filter((v) => v.hash !== bodyHash(v.body))).toStrictEqual([]);

    const latest = await store.latestSucceededRun();
    const listed = (await store.listingAt(latest!)).entries.map(
      (e) => JSON.parse(e) as Record<string, unknown>,
    );
    const upstream = await simulatedUpstream({ seed: 1, count: 0 });
    upstream.data.setEntries(listed);
    const summary = await sync(store, upstream);
    expect(summary.counts).toMatchObject({
      added: 0,
      changed: 0,
      removed: 0,
      returned: 0,
      unchanged: listed.length,
    });
    expect(
      await store.listChanges({ limit: 10, since: (await store.getRun(summary.runId))!.finishedAt! }),
    ).toStrictEqual([]);
  });
});

describePostgres('the migrations since 982782f on PostgreSQL rows written that release’s way', () => {
  const postgres = usePostgres();

  it('answers the same history after the migration', async () => {
    const url = postgres.server.url(await postgres.server.createDatabase());
    await writeReleaseDatabase(url);
    const store = await openPgStore(pgTarget(url), { poolMax: 2 });
    onTestFinished(() => store.close());
    expect(withoutHashes(await historyOf(store))).toStrictEqual(releaseHistory());
  });
});

/**
 * A PostgreSQL database as the release left it: the release's migrations, recorded as drizzle's
 * migrator records them, and the fixture's rows copied in as they are.
 */
async function writeReleaseDatabase(url: string): Promise<void> {
  const all = knownMigrations('postgres');
  const release = all.slice(0, RELEASE_PG_MIGRATIONS);
  expect(all[RELEASE_PG_MIGRATIONS]?.sql.join('')).toContain('DROP COLUMN "at"');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sqlite = new Database(FIXTURE, { readonly: true });
  try {
    for (const migration of release) for (const statement of migration.sql) await client.query(statement);
    await client.query('create schema if not exists drizzle');
    await client.query(
      'create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)',
    );
    for (const migration of release) {
      await client.query('insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)', [
        migration.hash,
        migration.folderMillis,
      ]);
    }
    for (const table of COPIED_TABLES) {
      const found = sqlite.prepare(`select * from ${table} order by rowid`).all() as Record<
        string,
        unknown
      >[];
      for (const row of found) {
        const columns = Object.keys(row);
        await client.query(
          `insert into ${table} (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
          Object.values(row),
        );
      }
    }
  } finally {
    sqlite.close();
    await client.end();
  }
}
