import { chmodSync } from 'node:fs';
import { desc } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runs } from '../../src/db/schema.js';
import { openRunReader } from '../../src/db/sqlite/run-reader.js';
import { prepared } from '../../src/db/prepared.js';
import { runRows } from '../../src/db/run-reads.js';
import { sqliteSqlPort } from '../../src/db/sqlite/sql-port.js';
import { tempDatabase } from '../helpers/temp-db.js';
import type { MirrorDatabase } from '../../src/db/open.js';

/** Runs in every shape a row takes: finished with figures, failed, rebound, and left running by a dead holder. */
function seedRuns(store: MirrorDatabase): void {
  drizzle(store.sqlite)
    .insert(runs)
    .values([
      {
        status: 'succeeded',
        startedAt: '2026-01-01T00:00:00.000Z',
        finishedAt: '2026-01-01T00:00:05.000Z',
        upstream: 'https://team.example.test',
        pages: 3,
        entries: 45,
        pageSize: 20,
        added: 45,
        unknownFields: '["badge"]',
      },
      {
        status: 'failed',
        startedAt: '2026-01-02T00:00:00.000Z',
        finishedAt: '2026-01-02T00:00:01.000Z',
        upstream: 'https://team.example.test',
        errorCode: 'UPSTREAM_HTTP',
        errorMessage: 'page 2 answered 503',
        reboundFrom: 'https://old.example.test',
      },
      {
        status: 'running',
        startedAt: '2020-01-03T00:00:00.000Z',
        upstream: 'https://team.example.test',
        holderPid: 4242,
        holderHost: 'a-host-long-gone',
        holderToken: 'token',
        heartbeatAt: '2020-01-03T00:00:00.000Z',
      },
    ])
    .run();
}

describe('runs read without the ORM (issue 21: `runs` at 2× a bare node)', () => {
  it('runRows gives the ORM’s rows, every column under its name and in its order', async () => {
    const store = tempDatabase();
    seedRuns(store);
    const orm = drizzle(store.sqlite).select().from(runs).orderBy(desc(runs.id)).all();
    const port = sqliteSqlPort((sql) => prepared(store.sqlite, sql));
    const raw = await runRows(port, { limit: 10 });
    expect(raw).toEqual(orm);
    expect(raw.map((r) => Object.keys(r))).toEqual(orm.map((r) => Object.keys(r)));
    expect(await runRows(port, { limit: 1, offset: 1 })).toEqual(orm.slice(1, 2));
  });

  it('a current database is read as the store reads it, a dead holder’s run as aborted, nothing written', async () => {
    const store = tempDatabase();
    seedRuns(store);
    const reader = openRunReader(store.file);
    expect(reader).not.toBeNull();
    try {
      const read = await reader?.listRuns({ limit: 10 });
      expect(read).toEqual(await store.listRuns({ limit: 10 }));
      expect(read?.[0]).toMatchObject({ status: 'aborted', errorCode: 'RUN_ABORTED' });
      expect(await reader?.mediaRunsByIds([1, 2, 3])).toEqual(await store.mediaRunsByIds([1, 2, 3]));
    } finally {
      reader?.close();
    }
    expect(store.sqlite.prepare('select status from runs where id = 3').pluck().get()).toBe('running');
  });

  it.each([
    [
      'a migration to apply',
      'delete from __drizzle_migrations where created_at = (select max(created_at) from __drizzle_migrations)',
    ],
    [
      'a migration this build does not know',
      "insert into __drizzle_migrations (hash, created_at) values ('x', 9e15)",
    ],
    ['no migrations at all', 'drop table __drizzle_migrations'],
  ])('a database with %s is left to the full open', (_name, edit) => {
    const store = tempDatabase();
    store.sqlite.exec(edit);
    expect(openRunReader(store.file)).toBeNull();
  });

  it('no file is left to the full open, which says DB_NOT_FOUND and creates nothing', () => {
    const store = tempDatabase();
    expect(openRunReader(`${store.file}.missing`)).toBeNull();
  });

  it('a file chmod 0444 is left to the full open, which reads it read-only, even for root', () => {
    const store = tempDatabase();
    store.close();
    chmodSync(store.file, 0o444);
    expect(openRunReader(store.file)).toBeNull();
  });
});
