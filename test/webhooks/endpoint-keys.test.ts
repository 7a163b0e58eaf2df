import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { webhookUrlDigest, type EndpointKeys } from '../../src/db/endpoint-keys.js';
import { openDatabase } from '../../src/db/open.js';
import { notificationRowsOf } from '../../src/db/open-store.js';
import type { Store } from '../../src/db/store.js';
import { listDeliveries } from '../../src/webhooks/delivery-queries.js';
import { recordRunWithChange } from '../helpers/recorded-run.js';
import { STORE_KINDS, storeOpener, storeRows } from '../helpers/postgres.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tableRows, tempDir } from '../helpers/temp-db.js';
import { webhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverySettings, deliveryWorker } from '../helpers/webhook-runs.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The targets of a NOTIFY_URLS value, as the config reads them (each with its plain digest). */
const targetsOf = (entries: readonly string[]) => loadConfig({ NOTIFY_URLS: entries.join(',') }).notify.urls;

const DIGEST_END = '2030-01-01T00:00:00.000Z';

/** The endpoint rows, the deliveries and the message ids: what re-keying may and may not touch. */
async function outboxState(store: Store) {
  return {
    endpoints: await storeRows(
      store,
      'select id, url, disabled_at, disabled_reason from webhook_endpoints order by id',
    ),
    deliveries: await storeRows(
      store,
      'select id, message_id, endpoint_id, status, attempts from webhook_deliveries order by id',
    ),
    attempts: await storeRows(store, 'select id, delivery_id, http_status from webhook_attempts order by id'),
    messages: await storeRows(store, 'select id, webhook_id, type from webhook_messages order by id'),
  };
}

type OutboxState = Awaited<ReturnType<typeof outboxState>>;

/** `state` with every id written under `from`'s keys written under `to`'s instead. */
function rekeyed(
  state: OutboxState,
  names: { hook: string; digests: readonly string[] },
  from: (name: string) => string,
  to: (name: string) => string,
): OutboxState {
  const names_ = [names.hook, ...names.digests];
  const swap = (text: string) => names_.reduce((t, name) => t.replaceAll(from(name), to(name)), text);
  return {
    ...state,
    endpoints: state.endpoints.map((row) => ({ ...row, url: swap(String(row.url)) })),
    messages: state.messages.map((row) => ({ ...row, webhook_id: swap(String(row.webhook_id)) })),
  };
}

describe.each(STORE_KINDS)('endpoint ids are keyed under a key the database keeps, on %s', (kind) => {
  const stores = storeOpener(kind);

  /**
   * A store with a webhook endpoint (one delivery sent, one pending), two notification targets
   * (one disabled by a refusal) and a digest already written for one of them.
   */
  async function storeWithOutbox() {
    const receiver = await webhookReceiver(null);
    const hook = `${receiver.url}/build_hooks/deploy-token-7Qx`;
    const entries = [
      'slack+http://127.0.0.1:9/services/T0/B0/slack-token-4Kd',
      'ntfy+http://127.0.0.1:9/topic-9Lw',
    ];
    const store = await stores.open();
    const upstream = await simulatedUpstream({ seed: 23, count: 4 });
    const env = { WEBHOOK_URLS: hook, NOTIFY_URLS: entries.join(',') };
    await sync(store, upstream, env);
    await deliveryWorker(store, deliverySettings([hook])).drain(5_000);
    upstream.data.edit(1, 'post');
    await sync(store, upstream, env);
    const targets = targetsOf(entries);
    const [slack, ntfy] = targets.map((t) => store.endpointKeys.notifyTarget(t.digest));
    const outbox = notificationRowsOf(store);
    if (!outbox?.enqueueDigest || slack === undefined || ntfy === undefined) throw new Error('no outbox');
    await outbox.disableTarget(slack, 'answered 404: no_service');
    const written = await outbox.enqueueDigest({
      from: '2000-01-01T00:00:00.000Z',
      to: DIGEST_END,
      targetIds: [ntfy],
      message: () => ({ type: 'notify.changes', body: '{}' }),
    });
    expect(written).toBe(1);
    return { receiver, hook, entries, targets, store };
  }

  it('an id is an HMAC under the store key: not the URL digest, stable across opens, another in another store', async () => {
    const { hook, targets, store } = await storeWithOutbox();
    // The key is one of the database's named values, beside its mirror id, in the one table of them.
    const keyRows = await storeRows(store, 'select name, value from store_identity order by name');
    expect(keyRows).toEqual([
      { name: 'endpoint_id_key', value: expect.stringMatching(/^[0-9a-f]{64}$/) as string },
    ]);
    const urls = (await outboxState(store)).endpoints.map((e) => e.url);
    const digests = targets.map((t) => t.digest);
    expect(urls).toEqual([
      store.endpointKeys.webhook(hook),
      ...digests.map((d) => `notify:${store.endpointKeys.notifyTarget(d)}`),
    ]);
    // Neither the plain SHA-256 of the URL nor the target's plain digest: a guess cannot be tested.
    expect(urls[0]).toMatch(/^webhook:[0-9a-f]{64}$/);
    expect(urls).not.toContain(`webhook:${sha256(new URL(hook).href)}`);
    for (const digest of digests) expect(JSON.stringify(urls)).not.toContain(digest);

    // Another process opening the database: the same key, the same ids, no new endpoint row.
    const restarted = await stores.another(store);
    expect(restarted.endpointKeys.webhook(hook)).toBe(store.endpointKeys.webhook(hook));
    expect(await storeRows(restarted, 'select name, value from store_identity order by name')).toEqual(
      keyRows,
    );
    const upstream = await simulatedUpstream({ seed: 5, count: 2 });
    await sync(restarted, upstream, { WEBHOOK_URLS: hook, SYNC_CONFIRM_DROP: '0' });
    expect((await outboxState(restarted)).endpoints.map((e) => e.url)).toEqual(urls);

    // Another database: another key, other ids for the same URL.
    const other = await stores.open();
    expect(other.endpointKeys.webhook(hook)).not.toBe(store.endpointKeys.webhook(hook));
    expect(JSON.stringify(store.endpointKeys)).toBe('"[endpoint keys]"');
  });

  /**
   * Rewrites the store's outbox as the code before keys wrote it: each id the plain digest of its
   * URL (a target's digest in digest messages' ids too), and no key yet.
   */
  async function asWrittenBeforeKeys(store: Store, hook: string, digests: readonly string[]) {
    const names = { hook, digests };
    const keyedBy = (keys: EndpointKeys) => (name: string) =>
      name === hook ? keys.webhook(name).slice('webhook:'.length) : keys.notifyTarget(name);
    const plain = (name: string) => (name === hook ? webhookUrlDigest(name) : name);
    const written = await outboxState(store);
    const former = rekeyed(written, names, keyedBy(store.endpointKeys), plain);
    for (const row of former.endpoints) {
      const url = String(row.url);
      await storeRows(store, `update webhook_endpoints set url = '${url}' where id = ${Number(row.id)}`);
    }
    for (const [i, row] of former.messages.entries()) {
      const [was, now] = [String(written.messages[i]?.webhook_id), String(row.webhook_id)];
      await storeRows(store, `update webhook_messages set webhook_id = '${now}' where webhook_id = '${was}'`);
    }
    await storeRows(store, "delete from store_identity where name = 'endpoint_id_key'");
    expect(await outboxState(store)).toEqual(former);
    expect(former.endpoints.map((e) => e.url)).toContain(`webhook:${sha256(new URL(hook).href)}`);
    return { names, written, former, plain, keyedBy };
  }

  it('a database written before keys is re-keyed on open, once: history, disabled targets and pending rows carry on', async () => {
    const { receiver, hook, targets, store } = await storeWithOutbox();
    const { names, written, former, plain, keyedBy } = await asWrittenBeforeKeys(
      store,
      hook,
      targets.map((t) => t.digest),
    );

    const upgraded = await stores.another(store);
    const keys = upgraded.endpointKeys;
    const after = await outboxState(upgraded);
    // Every id re-keyed under the new key, every other column and row as it was.
    expect(after).toEqual(rekeyed(former, names, plain, keyedBy(keys)));
    expect(after.deliveries).toEqual(written.deliveries);
    expect(after.attempts).toEqual(written.attempts);
    for (const name of names.digests) expect(JSON.stringify(after)).not.toContain(name);
    expect(JSON.stringify(after)).not.toContain(webhookUrlDigest(hook));

    // The disabled target is disabled under its new id, which `notify enable` takes.
    const [slack, ntfy] = names.digests.map((d) => keys.notifyTarget(d));
    expect(await upgraded.disabledNotifyTargets()).toEqual([
      { targetId: slack, disabledAt: expect.any(String) as string, reason: 'answered 404: no_service' },
    ]);
    // The digest written before is still written: the same period is not sent twice.
    const outbox = notificationRowsOf(upgraded);
    const again = await outbox?.enqueueDigest?.({
      from: '2000-01-01T00:00:00.000Z',
      to: DIGEST_END,
      targetIds: [ntfy ?? ''],
      message: () => ({ type: 'notify.changes', body: '{}' }),
    });
    expect(again).toBe(0);
    // The pending webhook delivery reaches the URL, and the history names it by its label.
    const sent = receiver.received.length;
    expect(await deliveryWorker(upgraded, deliverySettings([hook])).drain(5_000)).toBe(0);
    expect(receiver.received.length).toBe(sent + 1);
    const views = await listDeliveries(upgraded, { limit: 10 }, [hook]);
    expect(new Set(views.map((v) => v.endpoint.url))).toEqual(new Set([`${new URL(hook).origin}/…`]));
    expect(views.map((v) => v.status)).toEqual(['succeeded', 'succeeded']);

    // Opened again: the key stands, nothing is re-keyed twice.
    const reopened = await stores.another(store);
    expect(reopened.endpointKeys.webhook(hook)).toBe(keys.webhook(hook));
    const settled = await outboxState(reopened);
    expect(settled.endpoints).toEqual(after.endpoints);
    expect(settled.messages).toEqual(after.messages);
  });

  it('two processes opening an unkeyed database at once agree on one key', async () => {
    const { hook, targets, store } = await storeWithOutbox();
    await asWrittenBeforeKeys(
      store,
      hook,
      targets.map((t) => t.digest),
    );
    const [a, b] = await Promise.all([stores.another(store), stores.another(store)]);
    expect(a.endpointKeys.webhook(hook)).toBe(b.endpointKeys.webhook(hook));
    expect(
      await storeRows(a, "select count(*) as n from store_identity where name = 'endpoint_id_key'"),
    ).toEqual([{ n: 1 }]);
    // Re-keyed once: a second re-keying would have keyed the keyed id again.
    expect((await outboxState(a)).endpoints[0]?.url).toBe(a.endpointKeys.webhook(hook));
  });
});

/**
 * A database as the code before endpoint keys wrote it: the endpoint row holds the URL as given
 * (written here with that code's statements), a message and a pending delivery to it.
 */
async function databaseWithClearUrl(file: string, url: string): Promise<void> {
  const store = openDatabase(file);
  try {
    await recordRunWithChange(store, [url]);
    // What the earlier code stored: the URL itself, token and all.
    store.sqlite.prepare('update webhook_endpoints set url = ?').run(url);
    store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    store.close();
  }
}

describe('webhook_endpoints keeps a key derived from the URL, never the URL', () => {
  it('converts the clear URLs of an existing database when opened, once; deliveries still reach the URL', async () => {
    const receiver = await webhookReceiver(null);
    const url = `${receiver.url}/build_hooks/secret-deploy-token`;
    const file = join(tempDir(), 'mirror.db');
    await databaseWithClearUrl(file, url);
    expect(readFileSync(file).includes('secret-deploy-token')).toBe(true);

    const store = openDatabase(file);
    onTestFinished(() => store.close());
    const key = store.endpointKeys.webhook(url);
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
    await recordRunWithChange(store, [url]);
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

  it('a clear row whose key a newer run already wrote hands its deliveries over to it', async () => {
    const url = 'https://api.example.com/build_hooks/other-token';
    const file = join(tempDir(), 'mirror.db');
    await databaseWithClearUrl(file, url);
    const store = openDatabase(file);
    onTestFinished(() => store.close());
    await recordRunWithChange(store, [url]);
    // A second process still on the earlier code writes the clear URL again.
    const clearId = store.sqlite
      .prepare(`insert into webhook_endpoints (url, created_at) values (?, '2026-11-24T09:00:00Z')`)
      .run(url).lastInsertRowid;
    store.sqlite.prepare('update webhook_deliveries set endpoint_id = ? where id = 2').run(clearId);
    store.close();
    const reopened = openDatabase(file);
    onTestFinished(() => reopened.close());
    expect(tableRows(reopened, 'webhook_endpoints', 'id, url')).toEqual([
      { id: 1, url: reopened.endpointKeys.webhook(url) },
    ]);
    expect(tableRows(reopened, 'webhook_deliveries', 'id, endpoint_id')).toEqual([
      { id: 1, endpoint_id: 1 },
      { id: 2, endpoint_id: 1 },
    ]);
  });

  it('a read-only open reads the key the database keeps, and writes none where there is none', async () => {
    const url = 'https://api.example.com/build_hooks/read-only-token';
    const file = join(tempDir(), 'mirror.db');
    const writer = openDatabase(file);
    await recordRunWithChange(writer, [url]);
    const key = writer.endpointKeys.webhook(url);
    writer.close();

    const reader = openDatabase(file, { readonly: true });
    onTestFinished(() => reader.close());
    expect(reader.endpointKeys.webhook(url)).toBe(key);
    expect(tableRows(reader, 'webhook_endpoints', 'id, url')).toEqual([{ id: 1, url: key }]);

    // A database without a key yet: the reader's ids match no row, and the database stays as it was.
    const unkeyed = openDatabase(file);
    unkeyed.sqlite.prepare("delete from store_identity where name = 'endpoint_id_key'").run();
    unkeyed.close();
    const blind = openDatabase(file, { readonly: true });
    onTestFinished(() => blind.close());
    expect(blind.endpointKeys.webhook(url)).not.toBe(key);
    expect(tableRows(blind, 'store_identity', 'name')).toEqual([]);
  });
});
