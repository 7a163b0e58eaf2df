import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle as sqliteDrizzle } from 'drizzle-orm/better-sqlite3';
import { migrate as sqliteMigrate } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as pgDrizzle } from 'drizzle-orm/node-postgres';
import { migrate as pgMigrate } from 'drizzle-orm/node-postgres/migrator';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrationsFolder, type Dialect } from '../../src/db/migration-files.js';
import { openDatabase } from '../../src/db/open.js';
import {
  connectClient,
  describePostgres,
  openPgStoreAt,
  storeRows,
  usePostgres,
} from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-db.js';

// Migration outbox_channel on a database written before it: an endpoint's channel was told by its
// key's prefix, so the notification targets' rows must come out `notify` and every other `webhook`,
// or a notification would be handed to the webhook sender (signed and posted to nobody's URL).

const ENDPOINTS = [
  { url: 'webhook:4f1c', createdAt: '2026-11-01T00:00:00.000Z' },
  { url: 'notify:9a2e', createdAt: '2026-11-01T00:00:01.000Z' },
  { url: 'notify:77b0', createdAt: '2026-11-01T00:00:02.000Z' },
];
// The first open keys the ids anew (endpoint_id_key); their prefix stays.
const EXPECTED = [
  { kind: 'webhook', channel: 'webhook' },
  { kind: 'notify:', channel: 'notify' },
  { kind: 'notify:', channel: 'notify' },
];
const CHANNELS_SQL = 'select substr(url, 1, 7) as kind, channel from webhook_endpoints order by id';

/** A copy of a dialect's migrations that stops just before outbox_channel. */
function migrationsBeforeChannel(dialect: Dialect): string {
  const folder = join(tempDir(), dialect);
  cpSync(migrationsFolder(dialect), folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((entry) => entry.tag.endsWith('_outbox_channel'));
  expect(at, 'outbox_channel in the journal').toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalFile, JSON.stringify(journal));
  return folder;
}

describe('migration outbox_channel (SQLite)', () => {
  it('gives the notification targets written before it the notify channel, and the rest webhook', async () => {
    const file = join(tempDir(), 'mirror.db');
    const before = new Database(file);
    sqliteMigrate(sqliteDrizzle(before), { migrationsFolder: migrationsBeforeChannel('sqlite') });
    const insert = before.prepare('insert into webhook_endpoints (url, created_at) values (?, ?)');
    for (const endpoint of ENDPOINTS) insert.run(endpoint.url, endpoint.createdAt);
    before.close();

    const store = openDatabase(file);
    onTestFinished(() => store.close());
    expect(await storeRows(store, CHANNELS_SQL)).toStrictEqual(EXPECTED);
  });
});

describePostgres('migration outbox_channel (PostgreSQL)', () => {
  const pg = usePostgres();

  it('gives the notification targets written before it the notify channel, and the rest webhook', async () => {
    const client = await connectClient(pg.url);
    try {
      await pgMigrate(pgDrizzle({ client }), { migrationsFolder: migrationsBeforeChannel('postgres') });
      for (const endpoint of ENDPOINTS) {
        await client.query('insert into webhook_endpoints (url, created_at) values ($1, $2)', [
          endpoint.url,
          endpoint.createdAt,
        ]);
      }
    } finally {
      await client.end();
    }

    const store = await openPgStoreAt(pg.url);
    onTestFinished(() => store.close());
    expect(await storeRows(store, CHANNELS_SQL)).toStrictEqual(EXPECTED);
  });
});
