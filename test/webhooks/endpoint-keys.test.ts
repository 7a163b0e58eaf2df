import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { webhookEndpointKey } from '../../src/db/run-commit.js';
import { listDeliveries } from '../../src/webhooks/delivery-queries.js';
import { recordRunWithChange } from '../helpers/recorded-run.js';
import { tableRows, tempDir } from '../helpers/temp-db.js';
import { webhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverySettings, deliveryWorker } from '../helpers/webhook-runs.js';

/**
 * A database as the code before endpoint keys wrote it: the endpoint row holds the URL as given
 * (written here with that code's statements), a message and a pending delivery to it.
 */
function databaseWithClearUrl(file: string, url: string): void {
  const store = openDatabase(file);
  try {
    recordRunWithChange(store, [url]);
    // What the earlier code stored: the URL itself, token and all.
    store.sqlite.prepare('update webhook_endpoints set url = ?').run(url);
    store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    store.close();
  }
}

describe('webhook_endpoints keeps a key derived from the URL, never the URL (issue 22)', () => {
  it('converts the clear URLs of an existing database when opened, once; deliveries still reach the URL', async () => {
    const receiver = await webhookReceiver(null);
    const url = `${receiver.url}/build_hooks/secret-deploy-token`;
    const file = join(tempDir(), 'mirror.db');
    databaseWithClearUrl(file, url);
    expect(readFileSync(file).includes('secret-deploy-token')).toBe(true);

    const store = openDatabase(file);
    onTestFinished(() => store.close());
    const key = webhookEndpointKey(url);
    expect(key).toMatch(/^webhook:[0-9a-f]{64}$/);
    expect(tableRows(store, 'webhook_endpoints', 'id, url')).toEqual([{ id: 1, url: key }]);
    store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    store.sqlite.exec('vacuum');
    expect(readFileSync(file).includes('secret-deploy-token')).toBe(false);

    // Opened again: nothing left to convert, nothing changes.
    const again = openDatabase(file);
    expect(tableRows(again, 'webhook_endpoints', 'id, url')).toEqual([{ id: 1, url: key }]);
    again.close();

    // New runs use the same key; the worker maps it back to the configured URL.
    recordRunWithChange(store, [url]);
    expect(tableRows(store, 'webhook_endpoints', 'id, url')).toEqual([{ id: 1, url: key }]);
    await deliveryWorker(store, deliverySettings([url])).drain(5_000);
    const path = new URL(url).pathname;
    expect(receiver.received.map((r) => r.path)).toEqual([path, path]);

    // Views name it by the configured URL, masked, when known; else by its key.
    const known = await listDeliveries(store, { limit: 10 }, [url]);
    const masked = `${new URL(url).origin}/…`;
    expect(known.map((d) => d.endpoint.url)).toEqual([masked, masked]);
    const unknown = await listDeliveries(store, { limit: 10 });
    expect(unknown.map((d) => d.endpoint.url)).toEqual([key, key]);
  });

  it('a clear row whose key a newer run already wrote hands its deliveries over to it', () => {
    const url = 'https://api.example.com/build_hooks/other-token';
    const file = join(tempDir(), 'mirror.db');
    databaseWithClearUrl(file, url);
    const store = openDatabase(file);
    onTestFinished(() => store.close());
    recordRunWithChange(store, [url]);
    // A second process still on the earlier code writes the clear URL again.
    const clearId = store.sqlite
      .prepare(`insert into webhook_endpoints (url, created_at) values (?, '2026-11-24T09:00:00Z')`)
      .run(url).lastInsertRowid;
    store.sqlite.prepare('update webhook_deliveries set endpoint_id = ? where id = 2').run(clearId);
    store.close();
    const reopened = openDatabase(file);
    onTestFinished(() => reopened.close());
    expect(tableRows(reopened, 'webhook_endpoints', 'id, url')).toEqual([
      { id: 1, url: webhookEndpointKey(url) },
    ]);
    expect(tableRows(reopened, 'webhook_deliveries', 'id, endpoint_id')).toEqual([
      { id: 1, endpoint_id: 1 },
      { id: 2, endpoint_id: 1 },
    ]);
  });
});
