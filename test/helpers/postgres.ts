import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, onTestFinished } from 'vitest';
import { parsePostgresUrl, type PostgresTarget } from '../../src/config/database-url.js';
import { openDatabase } from '../../src/db/open.js';
import { openPgStore, type PgStore } from '../../src/db/postgres/store.js';
import { rows } from '../../src/db/postgres/sql.js';
import { SqliteStore } from '../../src/db/sqlite/store.js';
import type { Store } from '../../src/db/store.js';
import { untilTestEnds, type Defer } from './scope.js';
import { tempDatabase, tempDir } from './temp-db.js';

// A real PostgreSQL for the tests: initdb in a temporary folder, the postmaster on a free loopback
// port with its unix socket in that folder, stopped and removed afterwards. As root (CI containers)
// PostgreSQL refuses to run, so initdb and postgres run as the `postgres` user via runuser.

const SUPERUSER = 'postgres';

type Binaries = { dir: string } | { missing: string };

function versionedBinDirs(): string[] {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(base, v, 'bin'));
}

function findBinaries(): Binaries {
  const has = (d: string) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres'));
  // PG_BIN, when set, is the one place looked at: a wrong setting is reported, not worked around.
  const chosen = process.env.PG_BIN;
  if (chosen !== undefined && chosen !== '' && !has(chosen)) {
    return { missing: `PG_BIN=${chosen} holds no initdb and postgres` };
  }
  const fromPgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = [
    chosen,
    fromPgConfig.status === 0 ? fromPgConfig.stdout.trim() : undefined,
    ...versionedBinDirs(),
  ].filter((d): d is string => d !== undefined && d !== '');
  const dir = candidates.find(has);
  if (dir === undefined) {
    return {
      missing: 'PostgreSQL binaries (initdb, postgres) not found: apt-get install postgresql, or set PG_BIN',
    };
  }
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', SUPERUSER]).status !== 0) {
    return { missing: 'running as root and there is no `postgres` user to run PostgreSQL as' };
  }
  return { dir };
}

const binaries = findBinaries();

/**
 * Why the PostgreSQL tests cannot run here, or null when they can. With REQUIRE_REFERENCE=1 (CI)
 * a missing PostgreSQL is a failure, not a skip.
 */
export const postgresMissing: string | null = (() => {
  if (!('missing' in binaries)) return null;
  if (process.env.REQUIRE_REFERENCE === '1') {
    throw new Error(`REQUIRE_REFERENCE=1 but ${binaries.missing}`);
  }
  return binaries.missing;
})();

/** A describe block that needs PostgreSQL: skipped, with the reason in its name, when it is missing. */
export function describePostgres(name: string, body: () => void): void {
  const title = postgresMissing === null ? name : `${name} (skipped: ${postgresMissing})`;
  describe.skipIf(postgresMissing !== null)(title, body);
}

export interface PostgresServer {
  readonly host: string;
  readonly port: number;
  readonly socketDir: string;
  readonly superuser: string;
  readonly password: string;
  /** A postgres:// URL of `database` as the superuser, by TCP with the password. */
  url(database: string, overrides?: { password?: string; port?: number }): string;
  /** Creates an empty database and returns its name. */
  createDatabase(prefix?: string): Promise<string>;
  /** A pool on `database` over the unix socket (trust), for assertions and set-up. */
  admin(database?: string): pg.Pool;
  /**
   * SIGSTOPs the whole server: the postmaster first (no new session starts), then every process it
   * runs (open sessions stop answering). Returns the SIGCONT, to call in a `finally`; `stop()`
   * resumes a server left frozen.
   */
  freeze(): () => void;
  /** Shuts the server down (fast shutdown), keeping its data: an outage until `startAgain`. */
  shutDown(): Promise<void>;
  /** Starts it again on the same data and port after `shutDown`. */
  startAgain(): Promise<void>;
  stop(): Promise<void>;
}

/** A TCP port nothing listens on right now (released before it is returned). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function asPostgresUser(binary: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', SUPERUSER, '--', binary, ...args]] : [binary, args];
}

function initdb(bin: string, dir: string, password: string): string {
  const data = join(dir, 'data');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (process.getuid?.() === 0) {
    const uid = Number(spawnSync('id', ['-u', SUPERUSER], { encoding: 'utf8' }).stdout);
    const gid = Number(spawnSync('id', ['-g', SUPERUSER], { encoding: 'utf8' }).stdout);
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  const [command, args] = asPostgresUser(join(bin, 'initdb'), [
    ...['-D', data, '-U', SUPERUSER, '--pwfile', pwfile, '-E', 'UTF8', '--locale', 'C'],
    ...['--auth-local', 'trust', '--auth-host', 'scram-sha-256', '--no-sync', '--no-instructions'],
  ]);
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`initdb failed:\n${result.stdout}\n${result.stderr}`);
  return data;
}

/** Starts the postmaster and resolves once it accepts connections; rejects with its log if it dies. */
function postmaster(bin: string, data: string, dir: string, port: number): Promise<ChildProcess> {
  const [command, args] = asPostgresUser(join(bin, 'postgres'), [
    ...['-D', data, '-p', String(port), '-k', dir, '-h', '127.0.0.1'],
    // Throwaway data: durability costs time and buys nothing here.
    ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
  ]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
      if (log.includes('database system is ready to accept connections')) resolve(child);
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`postgres exited (${code ?? signal}) before ready:\n${log}`)),
    );
    child.once('error', reject);
  });
}

/** The postmaster's own pid: behind runuser the child we spawned is runuser, not postgres. */
function postmasterPid(data: string): number | null {
  try {
    return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
}

/** The processes whose parent is `pid`, read from /proc. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name is in parentheses and may hold spaces: the parent pid follows the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/**
 * SIGSTOP of the postmaster, then of its processes; the returned SIGCONT resumes them in reverse,
 * then `wrapper` (runuser, as root): it stops itself when the postmaster does, and a stopped
 * runuser never reaps the postmaster at shutdown.
 */
function freezeServer(data: string, wrapper: number | undefined): () => void {
  const pid = postmasterPid(data);
  if (pid === null || pid <= 0) throw new Error('freeze(): no postmaster.pid');
  process.kill(pid, 'SIGSTOP');
  const stopped = [pid];
  for (const child of childrenOf(pid)) {
    try {
      process.kill(child, 'SIGSTOP');
      stopped.push(child);
    } catch {
      // It ended between the listing and the signal.
    }
  }
  let thawed = false;
  return () => {
    if (thawed) return;
    thawed = true;
    for (const p of [...stopped.reverse(), ...(wrapper === undefined ? [] : [wrapper])]) {
      try {
        process.kill(p, 'SIGCONT');
      } catch {
        // Gone already.
      }
    }
  };
}

async function stopPostmaster(child: ChildProcess, data: string): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = postmasterPid(data);
  // SIGINT is PostgreSQL's fast shutdown: clients are disconnected, nothing is waited for.
  if (pid !== null && pid > 0) process.kill(pid, 'SIGINT');
  else child.kill('SIGINT');
  await exited;
}

async function startOn(
  bin: string,
  dir: string,
  data: string,
): Promise<{ child: ChildProcess; port: number }> {
  // A port found free can be taken by another process before postgres binds it: try another.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { child: await postmaster(bin, data, dir, port), port };
    } catch (error) {
      if (attempt >= 3 || !/could not bind|Address already in use/.test(String(error))) throw error;
    }
  }
}

/** A real PostgreSQL in a temporary folder; `stop()` shuts it down and removes the folder. */
export async function startPostgres(): Promise<PostgresServer> {
  if ('missing' in binaries) throw new Error(binaries.missing);
  const dir = mkdtempSync(join(tmpdir(), 'coworker-mirror-pg-'));
  const password = randomBytes(12).toString('hex');
  const pools: pg.Pool[] = [];
  try {
    const data = initdb(binaries.dir, dir, password);
    const started = await startOn(binaries.dir, dir, data);
    const { port } = started;
    let { child } = started;
    let adminPool: pg.Pool | undefined;
    const frozen = new Set<() => void>();
    const server: PostgresServer = {
      host: '127.0.0.1',
      port,
      socketDir: dir,
      superuser: SUPERUSER,
      password,
      url: (database, o = {}) =>
        `postgres://${SUPERUSER}:${encodeURIComponent(o.password ?? password)}@127.0.0.1:${o.port ?? port}/${database}`,
      admin: (database = 'postgres') => {
        const pool = new pg.Pool({ host: dir, port, user: SUPERUSER, database, max: 2 });
        // The server's shutdown ends idle connections with 57P01: expected here, not a failure.
        pool.on('error', () => undefined);
        pools.push(pool);
        return pool;
      },
      createDatabase: async (prefix = 'mirror') => {
        const name = `${prefix}_${randomBytes(6).toString('hex')}`;
        adminPool ??= server.admin();
        await adminPool.query(`create database ${name}`);
        return name;
      },
      freeze: () => {
        const thaw = freezeServer(data, child.pid);
        const once = () => {
          frozen.delete(once);
          thaw();
        };
        frozen.add(once);
        return once;
      },
      shutDown: () => stopPostmaster(child, data),
      startAgain: async () => {
        child = await postmaster(binaries.dir, data, dir, port);
      },
      stop: async () => {
        for (const thaw of [...frozen]) thaw();
        await Promise.all(pools.splice(0).map((pool) => pool.end()));
        await stopPostmaster(child, data);
        rmSync(dir, { recursive: true, force: true });
      },
    };
    return server;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

export interface PostgresFixture {
  readonly server: PostgresServer;
  /** The database created for this test file. */
  readonly database: string;
  /** Its URL (superuser, TCP, password). */
  readonly url: string;
}

/**
 * Per test file: one PostgreSQL started before the file's tests and a fresh database in it, both
 * gone after. Call inside a `describePostgres` block; read it in tests only.
 */
export function usePostgres(): PostgresFixture {
  let server: PostgresServer | undefined;
  let database = '';
  beforeAll(async () => {
    server = await startPostgres();
    database = await server.createDatabase();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);
  const started = (): PostgresServer => {
    if (server === undefined) throw new Error('usePostgres() is read in tests, after beforeAll');
    return server;
  };
  return {
    get server() {
      return started();
    },
    get database() {
      started();
      return database;
    },
    get url() {
      return started().url(database);
    },
  };
}

/** The target of a postgres:// URL, as the mirror parses DATABASE_URL. */
export function pgTarget(url: string): PostgresTarget {
  const parsed = parsePostgresUrl(url);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

/** The stores a store-level test runs on: `describe.each(STORE_KINDS)('… on %s', (kind) => …)`. */
export type StoreKind = 'sqlite' | 'postgres';
/** Without PostgreSQL here, SQLite alone (CI sets REQUIRE_REFERENCE=1: there a missing one fails). */
export const STORE_KINDS: readonly StoreKind[] =
  postgresMissing === null ? ['sqlite', 'postgres'] : ['sqlite'];

export interface StoreOpener {
  /** A fresh, migrated store, closed when the test ends. */
  open(): Promise<Store & { file: string }>;
  /** Another handle on the same database (another instance's connection), closed when the test ends. */
  another(store: Store): Promise<Store>;
}

/**
 * Opens stores of `kind`: SQLite files in temp folders, or new databases on this describe block's
 * PostgreSQL (started by `usePostgres`, so call this at the top of the block; tests read it).
 */
export function storeOpener(kind: StoreKind): StoreOpener {
  const pg = kind === 'postgres' ? usePostgres() : null;
  const urls = new WeakMap<Store, string>();
  const openPg = async (url: string): Promise<Store & { file: string }> => {
    const store = await openPgStoreAt(url);
    urls.set(store, url);
    onTestFinished(() => store.close());
    return store;
  };
  return {
    open: async () =>
      pg === null ? tempDatabase() : openPg(pg.server.url(await pg.server.createDatabase())),
    another: async (store) => {
      if (pg === null) {
        const handle = openDatabase(store.file);
        onTestFinished(() => handle.close());
        return handle;
      }
      const url = urls.get(store);
      if (url === undefined) throw new Error('another(): not a store this opener opened');
      return openPg(url);
    },
  };
}

/**
 * Fresh stores of `kind` for a describe block; call it at the top of the block (a PostgreSQL block
 * starts its server there). `fresh()` lives until the test ends, `fresh(defer)` for as long as
 * `defer` says (a fixture built once per file). Each is a new SQLite file or a new database.
 */
export function storeMaker(kind: StoreKind): (defer?: Defer) => Promise<Store & { file: string }> {
  const pg = kind === 'postgres' ? usePostgres() : null;
  return async (defer = untilTestEnds) => {
    if (pg === null) return tempDatabase(defer);
    const store = await openPgStoreAt(pg.server.url(await pg.server.createDatabase()));
    defer(() => store.close());
    return store;
  };
}

const madeUrls = new WeakMap<Store, string>();

/** A PostgreSQL store on `url` (not closed for you) whose rows `storeRows` and `databaseEnv` reach. */
export async function openPgStoreAt(
  url: string,
  options: Pick<Parameters<typeof openPgStore>[1], 'instanceId' | 'purpose' | 'deadlines'> = {},
): Promise<PgStore> {
  const store = await openPgStore(pgTarget(url), { poolMax: 4, ...options });
  madeUrls.set(store, url);
  return store;
}

/**
 * The variable that points a command (the CLI in-process, a spawned `start` or `sync`) at a store
 * `storeMaker` made: DATABASE_URL for PostgreSQL, DATABASE_PATH for a SQLite file.
 */
export function databaseEnv(
  store: Store & { file: string },
): { DATABASE_URL: string } | { DATABASE_PATH: string } {
  const url = madeUrls.get(store);
  return url === undefined ? { DATABASE_PATH: store.file } : { DATABASE_URL: url };
}

/** Every table of the mirror's data: what a whole-store assertion compares, table by table. */
export const DATA_TABLES = [
  'runs',
  'options_bodies',
  'coworkers',
  'versions',
  'listing_positions',
  'changes',
  'media_blobs',
  'media_versions',
  'media_urls',
  'media_runs',
  'webhook_endpoints',
  'webhook_messages',
  'webhook_deliveries',
  'webhook_attempts',
  'prunes',
] as const;

/** All of one table's rows in its key's order, the same on either store. */
export function wholeTableSql(table: string): string {
  const order = ['coworkers', 'media_urls', 'media_blobs', 'media_runs'].includes(table) ? '1' : 'id';
  return `select * from ${table} order by ${order}`;
}

/**
 * The rows a query reads from a store `storeMaker` made, on its own connection: for whole-table
 * assertions on either store (portable SQL; booleans read as SQLite's 0 and 1). A write is run
 * too, and answers no rows.
 */
export async function storeRows(store: Store, sql: string): Promise<Record<string, unknown>[]> {
  const url = madeUrls.get(store);
  if (url === undefined) {
    if (!(store instanceof SqliteStore)) throw new Error('storeRows(): not a store storeMaker made');
    const statement = store.sqlite.prepare(sql);
    // A write (an UPDATE a test stages) answers no rows, as on PostgreSQL.
    if (!statement.reader) {
      statement.run();
      return [];
    }
    return statement.all() as Record<string, unknown>[];
  }
  return pgRows(url, sql);
}

/** Rows of `sql` on a connection of its own to `url`, booleans read as SQLite's 0 and 1. */
async function pgRows(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = await connectClient(url);
  try {
    const found = await rows<Record<string, unknown>>(client, sql);
    return found.map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : v])),
    );
  } finally {
    await client.end();
  }
}

/**
 * One connection for a test's own reads, as the store's queries are typed. Not a pool: a pool's
 * end() resolves before its connections have closed, and a server stopped right after (the last
 * test of a file) ends them with 57P01, reported as an unhandled error; a client's end() waits.
 */
export async function connectClient(url: string): Promise<pg.PoolClient> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // A lone client is a PoolClient without release(), which the store's query helpers never call.
  return client as pg.PoolClient;
}

/** A database a spawned command (the built CLI, `start`) is pointed at, and reads of it. */
export interface CliDatabase {
  /** What `--db` takes: a SQLite file path or a postgres:// URL. */
  readonly arg: string;
  /** The variable that says the same: DATABASE_PATH or DATABASE_URL. */
  readonly env: { DATABASE_PATH: string } | { DATABASE_URL: string };
  /** Rows of a query on a connection of its own (portable SQL; booleans as SQLite's 0 and 1). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
}

/**
 * New databases of `kind` for commands run as processes: a file path in a temp folder (created by
 * the command) or a new database on this describe block's PostgreSQL. Call at the top of the block.
 */
export function cliDatabases(kind: StoreKind): () => Promise<CliDatabase> {
  const pg = kind === 'postgres' ? usePostgres() : null;
  return async () => {
    if (pg === null) {
      const file = join(tempDir(), 'mirror.db');
      return {
        arg: file,
        env: { DATABASE_PATH: file },
        rows: (sql) => {
          const db = new Database(file, { readonly: true });
          try {
            return Promise.resolve(db.prepare(sql).all() as Record<string, unknown>[]);
          } finally {
            db.close();
          }
        },
      };
    }
    const url = pg.server.url(await pg.server.createDatabase());
    return {
      arg: url,
      env: { DATABASE_URL: url },
      rows: (sql) => pgRows(url, sql),
    };
  };
}
