/**
 * History reads on PostgreSQL against SQLite, same run, same rows: ≥ 1,000,000 change rows built
 * into a SQLite file by direct inserts (bench/lib/history-fixture.ts), copied table by table into a
 * real PostgreSQL (initdb in a temp folder, fsync off as in the tests; multi-row unnest inserts),
 * then `--calls` calls of each named store read the API serves most, through the Store interface on
 * both. p50/p99 per read, best p99 of `--rounds` rounds (a 1 % tail on a shared machine is mostly
 * other processes' time slices), and the ratio PostgreSQL / SQLite. Goal: p99 ≤ 10 ms on PostgreSQL.
 *
 *   npx tsx bench/pg-history-queries.ts [--calls 1000] [--rounds 3] [--coworkers 10000] [--runs 101]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openDatabase, type MirrorDatabase } from '../src/db/open.js';
import { openPgStore } from '../src/db/postgres/store.js';
import type { Store } from '../src/db/store.js';
import { EDITABLE_FIELDS, Rng } from '../src/simulated-upstream/index.js';
import { pgTarget, startPostgres, type PostgresServer } from '../test/helpers/postgres.js';
import { buildHistory, type Fixture } from './lib/history-fixture.js';
import { checkGoal, machineLine, millis, ratio, seconds } from './lib/report.js';
import { quantile } from './lib/stats.js';
import { withTempDir } from './lib/temp-dir.js';

const GOAL_P99_MS = 10;
const PAGE = 50;
/** Tables a history read touches, parents first (foreign keys). */
const TABLES = ['runs', 'coworkers', 'versions', 'listing_positions', 'changes'] as const;
const COPY_ROWS = 20_000;

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    coworkers: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '101' },
  },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);
const coworkers = Number(values.coworkers);
const runs = Number(values.runs);

interface Timing {
  p50: number;
  p99: number;
}

async function sample(fn: (i: number) => Promise<unknown>): Promise<Timing> {
  let best: Timing = { p50: Number.POSITIVE_INFINITY, p99: Number.POSITIVE_INFINITY };
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < 20; i++) await fn(i);
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      await fn(i);
      times.push(performance.now() - t);
    }
    const timing = { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
    if (timing.p99 < best.p99) best = timing;
  }
  return best;
}

function reads(store: Store, uuids: readonly string[]): [string, (i: number) => Promise<unknown>][] {
  // The same seed on both stores: both answer the same sequence of questions.
  const rng = new Rng(9);
  const uuidAt = (): string => rng.pick(uuids);
  return [
    ['coworkerHistory(uuid)', () => store.coworkerHistory(uuidAt())],
    [`listChanges newest first (limit ${PAGE + 1})`, () => store.listChanges({ limit: PAGE + 1 })],
    [
      'listChanges by field',
      (i) =>
        store.listChanges({ field: EDITABLE_FIELDS[i % EDITABLE_FIELDS.length] ?? 'post', limit: PAGE + 1 }),
    ],
    ['listChanges by uuid', () => store.listChanges({ uuid: uuidAt(), limit: PAGE + 1 })],
  ];
}

/** Column names and element types of a PostgreSQL table, in table order. */
async function pgColumns(pool: pg.Pool, table: string): Promise<{ name: string; type: string }[]> {
  const found = await pool.query<{ name: string; type: string }>(
    `select column_name as name, udt_name as type from information_schema.columns
      where table_name = $1 order by ordinal_position`,
    [table],
  );
  return found.rows;
}

/** Copies the fixture's tables from the SQLite file into the migrated PostgreSQL database. */
async function copyTables(sqlite: MirrorDatabase, url: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  let copied = 0;
  try {
    for (const table of TABLES) {
      const columns = await pgColumns(pool, table);
      const names = columns.map((c) => c.name);
      // In the table's own order: rowid, or the key of a table without one (coworkers).
      const select = sqlite.sqlite.prepare(`select ${names.join(', ')} from ${table}`).raw();
      const unnest = columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ');
      const insert = `insert into ${table} (${names.join(', ')}) select * from unnest(${unnest})`;
      let batch: unknown[][] = [];
      const flush = async (): Promise<void> => {
        if (batch.length === 0) return;
        const params = columns.map((c, i) =>
          batch.map((row) => (c.type === 'bool' && row[i] !== null ? row[i] === 1 : row[i])),
        );
        await pool.query(insert, params);
        copied += batch.length;
        batch = [];
      };
      for (const row of select.iterate() as Iterable<unknown[]>) {
        batch.push(row);
        if (batch.length >= COPY_ROWS) await flush();
      }
      await flush();
      if (names.includes('id')) {
        await pool.query(`select setval(pg_get_serial_sequence($1, 'id'), (select max(id) from ${table}))`, [
          table,
        ]);
      }
      await pool.query(`analyze ${table}`);
    }
  } finally {
    await pool.end();
  }
  return copied;
}

function build(file: string): Fixture {
  const store = openDatabase(file);
  try {
    for (const pragma of ['cache_size = -262144', 'synchronous = OFF', 'wal_autocheckpoint = 0'])
      store.sqlite.pragma(pragma);
    return buildHistory(store, { coworkers, runs, editsPerRun: Math.round(coworkers / 4), fieldsPerEdit: 4 });
  } finally {
    store.close();
  }
}

async function onPostgres(server: PostgresServer, file: string): Promise<{ url: string; copyMs: number }> {
  const url = server.url(await server.createDatabase('history'));
  // Opening the store applies the migrations: the copy lands in the real schema with its indexes.
  await (await openPgStore(pgTarget(url), {})).close();
  const started = performance.now();
  const sqlite = openDatabase(file);
  try {
    const rows = await copyTables(sqlite, url);
    const copyMs = performance.now() - started;
    console.log(`history: copied ${rows.toLocaleString('en-US')} rows into PostgreSQL in ${seconds(copyMs)}`);
    return { url, copyMs };
  } finally {
    sqlite.close();
  }
}

async function main(): Promise<void> {
  console.log(machineLine());
  const server = await startPostgres();
  try {
    await withTempDir(async (dir) => {
      const file = join(dir, 'history.db');
      const started = performance.now();
      const fixture = build(file);
      console.log(
        `history: built ${fixture.changeRows.toLocaleString('en-US')} change rows, ${fixture.versionRows.toLocaleString('en-US')} versions, ` +
          `${coworkers.toLocaleString('en-US')} coworkers, ${runs} runs in SQLite in ${seconds(performance.now() - started)}; ` +
          `${calls} calls per read, best p99 of ${rounds} rounds`,
      );
      const { url } = await onPostgres(server, file);
      const sqliteStore = openDatabase(file);
      const pgStore = await openPgStore(pgTarget(url), {});
      try {
        const sqliteReads = reads(sqliteStore, fixture.uuids);
        const pgReads = reads(pgStore, fixture.uuids);
        for (const [index, [name, fn]] of pgReads.entries()) {
          const base = await sample(sqliteReads[index]?.[1] ?? fn);
          const t = await sample(fn);
          console.log(
            `${name}: sqlite p50 ${millis(base.p50)} p99 ${millis(base.p99)}; postgres p50 ${millis(t.p50)} ` +
              `p99 ${millis(t.p99)}; p99 ratio ${ratio(t.p99 / base.p99)} ` +
              checkGoal(
                'pg-history-queries',
                `${name} postgres p99`,
                Number(t.p99.toFixed(2)),
                GOAL_P99_MS,
                ' ms',
              ),
          );
        }
      } finally {
        sqliteStore.close();
        await pgStore.close();
      }
    });
  } finally {
    await server.stop();
  }
}

await main();
