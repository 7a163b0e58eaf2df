import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CHANGE_ROWS_SQL } from '../../src/db/change-columns.js';
import { knownMigrations } from '../../src/db/migration-files.js';
import { openDatabase } from '../../src/db/open.js';
import { openPgStore } from '../../src/db/postgres/store.js';
import type { ChangeRow } from '../../src/db/schema.js';
import type { Store } from '../../src/db/store.js';
import { describePostgres, pgTarget, usePostgres } from '../helpers/postgres.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDatabase, tempDir } from '../helpers/temp-db.js';

// migration body_once on a database the release before it wrote (test/fixtures/release-db/, made
// by write-release-db.ts on commit 00aca72): every change reads back byte for byte as it was
// stored, and each whole entry is then stored once, in its version.

const FIXTURE = join(import.meta.dirname, '../fixtures/release-db/mirror-0.1.0.db');
const COPIED_TABLES = ['options_bodies', 'runs', 'coworkers', 'versions', 'listing_positions', 'changes'];

/** The change rows as the release stored them, oldest first, in ChangeRow's shape. */
function releaseChanges(): ChangeRow[] {
  const db = new Database(FIXTURE, { readonly: true });
  try {
    return db
      .prepare(
        `select id, run_id as runId, at, uuid, slot, kind, field, old_value as oldValue,
                new_value as newValue from changes order by id`,
      )
      .all() as ChangeRow[];
  } finally {
    db.close();
  }
}

/** Every change as the store's reads answer it, oldest first: the list and each coworker's history. */
async function readBack(store: Store): Promise<{ listed: ChangeRow[]; histories: ChangeRow[] }> {
  const listed = (await store.listChanges({ limit: 10_000 })).reverse();
  const uuids = [...new Set(listed.map((c) => c.uuid))];
  const histories: ChangeRow[] = [];
  for (const uuid of uuids) histories.push(...((await store.coworkerHistory(uuid))?.changes ?? []));
  histories.sort((a, b) => a.id - b.id);
  return { listed, histories };
}

const WHOLE_ENTRY_KINDS = ['added', 'returned', 'removed'];

describe('migration body_once on a database written by the release before it (SQLite)', () => {
  it('reads every change back byte for byte, and stores each whole entry only in its version', async () => {
    const file = join(tempDir(), 'mirror.db');
    copyFileSync(FIXTURE, file);
    const before = releaseChanges();
    expect(before.filter((c) => WHOLE_ENTRY_KINDS.includes(c.kind)).length).toBeGreaterThan(25);

    const store = openDatabase(file);
    onTestFinished(() => store.close());
    const { listed, histories } = await readBack(store);
    expect(listed).toStrictEqual(before);
    expect(histories).toStrictEqual(before);

    const stored = store.sqlite
      .prepare(
        `select c.kind, c.old_value as oldValue, c.new_value as newValue, c.version_id as versionId,
                v.body from changes c left join versions v on v.id = c.version_id order by c.id`,
      )
      .all() as {
      kind: string;
      oldValue: string | null;
      newValue: string | null;
      versionId: number | null;
      body: string | null;
    }[];
    stored.forEach((row, i) => {
      const was = before[i];
      if (!WHOLE_ENTRY_KINDS.includes(row.kind)) {
        expect(row).toMatchObject({ versionId: null, oldValue: was?.oldValue, newValue: was?.newValue });
      } else if (row.kind === 'removed') {
        expect(row).toStrictEqual({
          kind: 'removed',
          oldValue: null,
          newValue: null,
          versionId: row.versionId,
          body: was?.oldValue,
        });
      } else {
        expect(row).toStrictEqual({
          kind: row.kind,
          oldValue: null,
          newValue: null,
          versionId: row.versionId,
          body: was?.newValue,
        });
      }
    });
  });
});

describePostgres('migration body_once on PostgreSQL rows written the release’s way', () => {
  const postgres = usePostgres();

  it('reads every change back byte for byte after the migration', async () => {
    const url = postgres.server.url(await postgres.server.createDatabase());
    await writeReleaseDatabase(url);
    const before = releaseChanges();

    const store = await openPgStore(pgTarget(url), { poolMax: 2 });
    onTestFinished(() => store.close());
    const { listed, histories } = await readBack(store);
    expect(listed).toStrictEqual(before);
    expect(histories).toStrictEqual(before);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    onTestFinished(() => client.end());
    const { rows } = await client.query<{ kind: string; copies: string; refs: string }>(
      `select kind, count(*) filter (where coalesce(old_value, new_value) is not null) as copies,
              count(version_id) as refs from changes group by kind order by kind`,
    );
    const kinds = Object.fromEntries(rows.map((r) => [r.kind, [Number(r.copies), Number(r.refs)]]));
    const count = (kind: string) => before.filter((c) => c.kind === kind).length;
    expect(kinds).toStrictEqual({
      added: [0, count('added')],
      changed: [count('changed'), 0],
      removed: [0, count('removed')],
      returned: [0, count('returned')],
    });
  });
});

describePostgres('a sync stores each whole entry once, on both stores', () => {
  const postgres = usePostgres();

  it('refers to the version and reads back alike: adds, removals, returns', async () => {
    const upstream = await simulatedUpstream({ seed: 7, count: 30, dupRate: 0.2, pageSize: 7 });
    const sqlite = tempDatabase();
    const url = postgres.server.url(await postgres.server.createDatabase());
    const pgStore = await openPgStore(pgTarget(url), { poolMax: 2 });
    onTestFinished(() => pgStore.close());
    const syncBoth = async () => {
      for (const store of [sqlite, pgStore] as Store[]) {
        await runSync(syncConfig(upstream.url), { store, logger: silentLogger() });
      }
    };
    await syncBoth();
    const first = upstream.data.entries() as Record<string, unknown>[];
    upstream.data.setEntries(first.slice(3));
    await syncBoth();
    upstream.data.setEntries([{ ...first[0], post: 'Back again' }, ...first.slice(1)]);
    await syncBoth();

    const onSqlite = await sqlite.listChanges({ limit: 1000 });
    const onPg = await pgStore.listChanges({ limit: 1000 });
    expect(onPg.map(({ id: _id, at: _at, ...c }) => c)).toStrictEqual(
      onSqlite.map(({ id: _id, at: _at, ...c }) => c),
    );
    const kinds = new Set(onSqlite.map((c) => c.kind));
    expect([...kinds].sort()).toStrictEqual(['added', 'removed', 'returned']);
    // Each whole entry is the text the upstream served for that uuid.
    const served = new Set(first.map((e) => JSON.stringify(e)));
    for (const c of onSqlite.filter((c) => c.kind === 'added'))
      expect(served.has(c.newValue ?? '')).toBe(true);
    const COPIES = `select count(*) as n from changes where kind in ('added', 'returned', 'removed')
                       and (version_id is null or old_value is not null or new_value is not null)`;
    expect(sqlite.sqlite.prepare(COPIES).pluck().get()).toBe(0);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    onTestFinished(() => client.end());
    expect((await client.query<{ n: string }>(COPIES)).rows).toStrictEqual([{ n: '0' }]);
    // The raw form PostgreSQL's own queries use reads the same rows (bigint ids arrive as text here).
    const raw = await client.query<Record<string, unknown>>(`${CHANGE_ROWS_SQL} order by c.id desc`);
    expect(raw.rows.map((r) => ({ ...r, id: Number(r.id), runId: Number(r.runId) }))).toStrictEqual(onPg);
  });
});

/**
 * A PostgreSQL database as the release left it: only the release's migration (0000), recorded as
 * drizzle's migrator records it, and the fixture's rows copied in as they are.
 */
async function writeReleaseDatabase(url: string): Promise<void> {
  const [release] = knownMigrations('postgres');
  if (!release) throw new Error('no PostgreSQL migrations');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sqlite = new Database(FIXTURE, { readonly: true });
  try {
    for (const statement of release.sql) await client.query(statement);
    await client.query('create schema if not exists drizzle');
    await client.query(
      'create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)',
    );
    await client.query('insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)', [
      release.hash,
      release.folderMillis,
    ]);
    for (const table of COPIED_TABLES) {
      for (const row of sqlite.prepare(`select * from ${table} order by rowid`).all() as Record<
        string,
        unknown
      >[]) {
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
