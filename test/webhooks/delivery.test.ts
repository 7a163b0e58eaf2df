import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { getDelivery } from '../../src/webhooks/delivery-queries.js';
import { enableEndpoint, redeliver } from '../../src/webhooks/delivery-store.js';
import { EXCERPT_BYTES } from '../../src/webhooks/send-attempt.js';
import { MAX_RETRY_AFTER_MS } from '../../src/outbox/outcome.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { commitRunWithChange } from '../helpers/store-runs.js';
import type { Store } from '../../src/db/store.js';
import { newSecret, webhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverySettings, deliveryWorker } from '../helpers/webhook-runs.js';

const attemptRows = (store: Store) =>
  storeRows(store, 'select delivery_id, http_status, ok, error_code from webhook_attempts order by id');
const messageColumn = async (store: Store, column: 'webhook_id' | 'body') =>
  (await storeRows(store, `select ${column} from webhook_messages order by id`)).map((r) => r[column]);
const tableRows = (store: Store, table: string, columns: string) =>
  storeRows(store, `select ${columns} from ${table} order by 1`);

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.each(STORE_KINDS)('delivery on %s: signed, retried, in order', (kind) => {
  const fresh = storeMaker(kind);

  it('signs every attempt as Standard Webhooks says, checked by the spec algorithm and the reference library', async () => {
    const store = await fresh();
    const secret = newSecret();
    const receiver = await webhookReceiver(secret);
    receiver.behave((n) =>
      n === 1 ? { kind: 'status', status: 500, body: 'try later' } : { kind: 'status', status: 204 },
    );
    await commitRunWithChange(store, [receiver.url]);
    await commitRunWithChange(store, [receiver.url]);

    const left = await deliveryWorker(store, deliverySettings([receiver.url], { secret })).drain(10_000);

    expect(left).toBe(0);
    const ids = await messageColumn(store, 'webhook_id');
    expect(receiver.received.map((r) => r.id)).toEqual([ids[0], ids[0], ids[1]]);
    for (const request of receiver.received) {
      expect(request).toMatchObject({ path: '/hook', verifiedBySpec: true, verifiedByLibrary: true });
      expect(request.signature).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
      expect(Number(request.timestamp)).toBeGreaterThan(1_700_000_000);
    }
    // The body is the stored message, byte for byte.
    const bodies = await messageColumn(store, 'body');
    expect(receiver.received.map((r) => r.body)).toEqual([bodies[0], bodies[0], bodies[1]]);
    expect(JSON.parse(receiver.received[0]?.body ?? '')).toMatchObject({ type: 'coworkers.changed' });
    expect(await attemptRows(store)).toEqual([
      { delivery_id: 1, http_status: 500, ok: 0, error_code: null },
      { delivery_id: 1, http_status: 204, ok: 1, error_code: null },
      { delivery_id: 2, http_status: 204, ok: 1, error_code: null },
    ]);
    expect((await getDelivery(store, 1))?.attempt_log[0]).toMatchObject({
      http_status: 500,
      ok: false,
      error: { code: null, message: 'answered 500' },
      response_excerpt: 'try later',
    });
    expect(await tableRows(store, 'webhook_deliveries', 'id, status, tries, attempts')).toEqual([
      { id: 1, status: 'succeeded', tries: 1, attempts: 2 },
      { id: 2, status: 'succeeded', tries: 0, attempts: 1 },
    ]);
  });

  it('posts unsigned without a secret (deploy hooks)', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    await commitRunWithChange(store, [receiver.url]);
    await deliveryWorker(store, deliverySettings([receiver.url])).drain(5_000);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.signature).toBeUndefined();
    expect(receiver.received[0]?.id).toBe((await messageColumn(store, 'webhook_id'))[0]);
  });

  it('gives up on a receiver that never answers at the deadline, then retries', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    receiver.behave((n) => (n === 1 ? { kind: 'hang' } : { kind: 'status', status: 200 }));
    await commitRunWithChange(store, [receiver.url]);
    await deliveryWorker(store, deliverySettings([receiver.url], { timeoutMs: 300 })).drain(10_000);
    expect(await attemptRows(store)).toEqual([
      { delivery_id: 1, http_status: null, ok: 0, error_code: 'TIMEOUT' },
      { delivery_id: 1, http_status: 200, ok: 1, error_code: null },
    ]);
  });

  it('a slow body that does not finish within the deadline is a timeout, whatever its status', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    receiver.behave((n) =>
      n === 1 ? { kind: 'slow-body', status: 200, everyMs: 50 } : { kind: 'status', status: 200 },
    );
    await commitRunWithChange(store, [receiver.url]);
    await deliveryWorker(store, deliverySettings([receiver.url], { timeoutMs: 400 })).drain(10_000);
    expect(await attemptRows(store)).toEqual([
      { delivery_id: 1, http_status: 200, ok: 0, error_code: 'TIMEOUT' },
      { delivery_id: 1, http_status: 200, ok: 1, error_code: null },
    ]);
  });

  it('a refused connection is retried along the schedule, then the delivery has failed', async () => {
    const store = await fresh();
    const url = `http://127.0.0.1:${await closedPort()}/hook`;
    await commitRunWithChange(store, [url]);
    await deliveryWorker(store, deliverySettings([url], { retryScheduleMs: [10, 20] })).drain(10_000);
    expect(await attemptRows(store)).toEqual([
      { delivery_id: 1, http_status: null, ok: 0, error_code: 'REFUSED' },
      { delivery_id: 1, http_status: null, ok: 0, error_code: 'REFUSED' },
      { delivery_id: 1, http_status: null, ok: 0, error_code: 'REFUSED' },
    ]);
    expect(await tableRows(store, 'webhook_deliveries', 'status, tries, attempts')).toEqual([
      { status: 'failed', tries: 3, attempts: 3 },
    ]);
  });

  it("a 429 or 503 is tried again after the receiver's Retry-After when it is longer than the schedule, at most a day later", async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    const asked = ['120', '99999999999999', 'Wed, 21 Oct 2015 07:28:00 GMT'];
    // The third retry's delay is a minute: a Retry-After already past asks for less.
    const schedule = [10, 10, 60_000, 60_000];
    receiver.behave((n) => ({
      kind: 'status',
      status: n === 2 ? 503 : 429,
      headers: { 'retry-after': asked[n - 1] ?? '0' },
    }));
    await commitRunWithChange(store, [receiver.url]);
    const waits: number[] = [];
    for (let n = 0; n < asked.length; n++) {
      const before = Date.now();
      // Each pass tries the delivery once; then the row is made due again for the next answer.
      await deliveryWorker(store, deliverySettings([receiver.url], { retryScheduleMs: schedule })).drain(
        5_000,
      );
      const [row] = await storeRows(store, 'select next_attempt_at from webhook_deliveries');
      waits.push(Date.parse(String(row?.next_attempt_at)) - before);
      await storeRows(store, "update webhook_deliveries set next_attempt_at = '2000-01-01T00:00:00.000Z'");
    }
    expect(receiver.received.length).toBe(3);
    // 120 s asked; then an absurd wait, held to a day; then a date already past: the schedule's minute.
    expect(waits[0]).toBeGreaterThanOrEqual(120_000);
    expect(waits[0]).toBeLessThan(130_000);
    expect(waits[1]).toBeGreaterThanOrEqual(MAX_RETRY_AFTER_MS);
    expect(waits[1]).toBeLessThan(MAX_RETRY_AFTER_MS + 10_000);
    expect(waits[2]).toBeGreaterThanOrEqual(60_000);
    expect(waits[2]).toBeLessThan(70_000);
    expect(await tableRows(store, 'webhook_deliveries', 'status, tries')).toEqual([
      { status: 'pending', tries: 3 },
    ]);
  });

  it('keeps at most 1 KB of an answer', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    receiver.behave(() => ({ kind: 'status', status: 200, body: 'x'.repeat(5_000) }));
    await commitRunWithChange(store, [receiver.url]);
    await deliveryWorker(store, deliverySettings([receiver.url])).drain(5_000);
    expect((await getDelivery(store, 1))?.last_attempt?.response_excerpt).toBe('x'.repeat(EXCERPT_BYTES));
  });

  it("logs an answer holding U+0000 with the character escaped (PostgreSQL's text cannot hold it)", async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    receiver.behave(() => ({ kind: 'status', status: 200, body: 'ok\u0000\nthanks' }));
    await commitRunWithChange(store, [receiver.url]);
    expect(await deliveryWorker(store, deliverySettings([receiver.url])).drain(5_000)).toBe(0);
    expect(await getDelivery(store, 1)).toMatchObject({
      status: 'succeeded',
      last_attempt: { ok: true, response_excerpt: 'ok\\u0000\nthanks' },
    });
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    receiver.behave((_n, request) =>
      request.path === '/hook'
        ? { kind: 'status', status: 302, headers: { location: '/elsewhere' } }
        : { kind: 'status', status: 200 },
    );
    await commitRunWithChange(store, [receiver.url]);
    await deliveryWorker(store, deliverySettings([receiver.url], { retryScheduleMs: [] })).drain(5_000);
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
    expect(await getDelivery(store, 1)).toMatchObject({
      status: 'failed',
      last_attempt: {
        http_status: 302,
        error: { message: expect.stringMatching(/redirects are not followed/) as string },
      },
    });
  });

  it('410 Gone disables the endpoint: nothing more is sent until it is re-enabled, then in order', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    let gone = true;
    receiver.behave(() => (gone ? { kind: 'status', status: 410 } : { kind: 'status', status: 200 }));
    await commitRunWithChange(store, [receiver.url]);
    await commitRunWithChange(store, [receiver.url]);
    const worker = deliveryWorker(store, deliverySettings([receiver.url]));
    expect(await worker.drain(5_000)).toBe(2);
    expect(receiver.received).toHaveLength(1);
    expect(await tableRows(store, 'webhook_endpoints', 'id, disabled_reason')).toEqual([
      { id: 1, disabled_reason: 'answered 410 Gone' },
    ]);

    gone = false;
    expect(await enableEndpoint(store, 1)).toBe(true);
    expect(await worker.drain(5_000)).toBe(0);
    const ids = await messageColumn(store, 'webhook_id');
    expect(receiver.received.map((r) => r.id)).toEqual([ids[0], ids[0], ids[1]]);
  });

  it('redeliver sends a delivered message again under the same webhook-id', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    await commitRunWithChange(store, [receiver.url]);
    const worker = deliveryWorker(store, deliverySettings([receiver.url]));
    await worker.drain(5_000);
    expect(await redeliver(store, 1)).toBe(true);
    expect(await redeliver(store, 99)).toBe(false);
    await worker.drain(5_000);
    expect(receiver.received.map((r) => r.id)).toEqual([
      (await messageColumn(store, 'webhook_id'))[0],
      (await messageColumn(store, 'webhook_id'))[0],
    ]);
    expect(await getDelivery(store, 1)).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('keeps each endpoint in order while another endpoint is failing', async () => {
    const store = await fresh();
    const slow = await webhookReceiver(null);
    const fast = await webhookReceiver(null);
    slow.behave((n) => (n <= 2 ? { kind: 'status', status: 503 } : { kind: 'status', status: 200 }));
    for (let i = 0; i < 3; i++) await commitRunWithChange(store, [slow.url, fast.url]);
    await deliveryWorker(store, deliverySettings([slow.url, fast.url])).drain(10_000);
    const [a, b, c] = await messageColumn(store, 'webhook_id');
    expect(slow.received.map((r) => r.id)).toEqual([a, a, a, b, c]);
    expect(fast.received.map((r) => r.id)).toEqual([a, b, c]);
  });

  it('a drain starts no attempt past its budget, however long the queue', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    receiver.behave(() => ({ kind: 'hang' }));
    for (let i = 0; i < 5; i++) await commitRunWithChange(store, [receiver.url]);
    const left = await deliveryWorker(store, deliverySettings([receiver.url], { timeoutMs: 400 })).drain(200);
    // Whatever the machine's speed: at most the one attempt started within the budget.
    expect((await attemptRows(store)).length).toBeLessThanOrEqual(1);
    expect(left).toBe(5);
  });

  it('stop() abandons an attempt in flight: no verdict logged, the delivery released for the next worker', async () => {
    const store = await fresh();
    const receiver = await webhookReceiver(null);
    receiver.behave((n) => (n === 1 ? { kind: 'hang' } : { kind: 'status', status: 200 }));
    await commitRunWithChange(store, [receiver.url]);
    const first = deliveryWorker(store, deliverySettings([receiver.url], { timeoutMs: 60_000 }));
    first.start();
    await receiver.waitForRequests(1);
    await first.stop();
    expect(await attemptRows(store)).toEqual([]);
    expect(await tableRows(store, 'webhook_deliveries', 'status, attempts, lease_until')).toEqual([
      { status: 'pending', attempts: 0, lease_until: null },
    ]);
    expect(await deliveryWorker(store, deliverySettings([receiver.url])).drain(5_000)).toBe(0);
    expect(receiver.received.map((r) => r.id)).toEqual([
      (await messageColumn(store, 'webhook_id'))[0],
      (await messageColumn(store, 'webhook_id'))[0],
    ]);
  });

  it('serves only the endpoints it is configured with', async () => {
    const store = await fresh();
    const kept = await webhookReceiver(null);
    const dropped = await webhookReceiver(null);
    await commitRunWithChange(store, [kept.url, dropped.url]);
    expect(await deliveryWorker(store, deliverySettings([kept.url])).drain(5_000)).toBe(0);
    expect(kept.received).toHaveLength(1);
    expect(dropped.received).toHaveLength(0);
  });
});
