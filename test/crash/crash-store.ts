import { join } from 'node:path';
import { expect } from 'vitest';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import { applicationName } from '../../src/db/postgres/open.js';
import { rows } from '../../src/db/postgres/sql.js';
import type { Store } from '../../src/db/store.js';
import { connectClient, openPgStoreAt, type PostgresServer, type StoreKind } from '../helpers/postgres.js';
import { eventually } from '../helpers/process.js';
import { crashChildInstance } from './child-instance.js';
import { tempDir } from '../helpers/temp-db.js';

// The crash campaigns kill a sync in a child process and then look at what it left. What they
// look at is the same on both stores; how they reach it is not: a SQLite file is checked before
// anything opens it for writing, a PostgreSQL database once the server has ended the dead child's
// sessions (and rolled back any transaction it had open).

/** A store opened as the next instance opens it, and raw reads of it in portable SQL. */
export interface CrashStore {
  readonly kind: StoreKind;
  readonly store: Store & { file: string };
  /** Rows of `sql`, parameters written `?` on both stores. Integers read as numbers. */
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Where a crash campaign's children sync to. */
export interface CrashDatabase {
  readonly kind: StoreKind;
  /** What child-sync.ts's `--db` gets: a SQLite file or a postgres:// URL. */
  readonly arg: string;
  /** Once the child `pid` is dead: checks what it left before anything writes to it. */
  afterKill(pid: number): Promise<void>;
  /** Opens the store as the next instance would: a dead holder's run is recorded aborted. */
  open(): Promise<CrashStore>;
}

export function sqliteCrashStore(store: MirrorDatabase): CrashStore {
  return {
    kind: 'sqlite',
    store,
    all: <T>(sql: string, ...params: unknown[]) =>
      Promise.resolve(store.sqlite.prepare(sql).all(...params) as T[]),
    close: () => Promise.resolve(store.close()),
  };
}

/** A SQLite file in a temp folder. */
export function sqliteCrashDatabase(file = join(tempDir(), 'mirror.db')): CrashDatabase {
  return {
    kind: 'sqlite',
    arg: file,
    afterKill: () => {
      // The file as the crash left it, before anything (a migration, recovery) writes to it.
      const raw = openDatabase(file, { migrate: false });
      try {
        expect(raw.sqlite.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
        expect(raw.sqlite.pragma('foreign_key_check')).toEqual([]);
      } finally {
        raw.close();
      }
      return Promise.resolve();
    },
    // Opening a SQLite file marks the runs of dead holders aborted.
    open: () => Promise.resolve(sqliteCrashStore(openDatabase(file))),
  };
}

const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** A new database on `server`. */
export async function postgresCrashDatabase(server: PostgresServer): Promise<CrashDatabase> {
  const url = server.url(await server.createDatabase('crash'));
  const admin = server.admin();
  // child-sync.ts names its sessions by its pid; the CLI's instance id holds its pid between slashes.
  const sessionsOf = async (pid: number): Promise<number> => {
    const found = await admin.query<{ n: string }>(
      'select count(*) as n from pg_stat_activity where application_name = $1 or application_name like $2',
      [applicationName(crashChildInstance(pid)), `coworker-mirror %/${pid}/%`],
    );
    return Number(found.rows[0]?.n ?? 0);
  };
  return {
    kind: 'postgres',
    arg: url,
    // No file to check: the server rolls back a dead client's open transaction when it reads the
    // closed socket, and ends its session, which frees its run lock. Wait for that, not for a time.
    afterKill: (pid) =>
      eventually(
        async () => ((await sessionsOf(pid)) === 0 ? true : undefined),
        undefined,
        `the killed child ${pid} to have no session left`,
      ).then(() => undefined),
    open: async () => {
      const store = await openPgStoreAt(url, { instanceId: 'crash-observer' });
      // The next instance that looks records the dead holder's run aborted (SQLite's open does it).
      await store.recoverDeadRuns();
      const client = await connectClient(url);
      return {
        kind: 'postgres',
        store,
        all: <T>(sql: string, ...params: unknown[]) => rows<T>(client, numbered(sql), params),
        close: async () => {
          await client.end();
          await store.close();
        },
      };
    },
  };
}
