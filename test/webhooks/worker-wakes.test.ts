import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { SAFETY_POLL_MS } from '../../src/outbox/worker.js';
import { STORE_KINDS, storeOpener } from '../helpers/postgres.js';
import { eventually } from '../helpers/process.js';
import { commitRunWithChange } from '../helpers/store-runs.js';
import { newSecret, webhookReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { deliverySettings, deliveryWorker } from '../helpers/webhook-runs.js';

/**
 * A wait that ends well before the worker's safety poll: what arrives within it was sent because
 * the worker was woken (a commit, a due time), not because it looked again by itself.
 */
const WOKEN_WITHIN_MS = SAFETY_POLL_MS / 2;

/** `store` with every operation called on it counted by name. */
function counted(store: Store): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]): unknown => {
        calls.push(property);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

/** Once every delivery has succeeded: their webhook-ids, oldest first. */
async function allSucceeded(store: Store): Promise<string[]> {
  return eventually(
    async () => {
      const rows = await store.listDeliveries({ limit: 100 });
      return rows.length > 0 && rows.every((r) => r.status === 'succeeded')
        ? rows.map((r) => r.webhookId).reverse()
        : undefined;
    },
    WOKEN_WITHIN_MS,
    'every delivery succeeded',
  );
}

function received(receiver: Receiver, count: number): Promise<true> {
  return eventually(
    () => (receiver.received.length >= count ? true : undefined),
    WOKEN_WITHIN_MS,
    `${count} webhook requests`,
  );
}

describe.each(STORE_KINDS)('the delivery worker on %s wakes, it does not poll', (kind) => {
  const stores = storeOpener(kind);

  it('two started workers on other connections send each commit once, and ask the store nothing while idle', async () => {
    const committer = await stores.open();
    const receiver = await webhookReceiver(newSecret());
    const settings = deliverySettings([receiver.url]);
    const workers = await Promise.all(
      [0, 1].map(async () => {
        const watched = counted(await stores.another(committer));
        deliveryWorker(watched.store, settings).start();
        return watched;
      }),
    );

    await commitRunWithChange(committer, [receiver.url]);
    await received(receiver, 1);
    await commitRunWithChange(committer, [receiver.url]);
    await received(receiver, 2);

    const ids = await allSucceeded(committer);
    expect(ids).toHaveLength(2);
    expect(receiver.received.map((r) => r.id)).toEqual(ids);
    // Idle: a worker may still be finishing the look its own last write set off, then nothing.
    // (The worker that polled asked the store twenty times a second.)
    const before = workers.map((w) => w.calls.length);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const idleCalls = workers.map((w, i) => w.calls.slice(before[i]));
    for (const calls of idleCalls) expect(calls.length).toBeLessThanOrEqual(1);
    expect(idleCalls.flat().every((name) => name === 'claimDue')).toBe(true);
    expect(receiver.received).toHaveLength(2);
  });

  it('a redelivery asked on another connection wakes a started worker at once', async () => {
    const committer = await stores.open();
    const receiver = await webhookReceiver(newSecret());
    deliveryWorker(await stores.another(committer), deliverySettings([receiver.url])).start();
    await commitRunWithChange(committer, [receiver.url]);
    await received(receiver, 1);
    await allSucceeded(committer);

    expect(await committer.redeliver(1)).toBe(true);

    await received(receiver, 2);
    expect(receiver.received[1]?.id).toBe(receiver.received[0]?.id);
  });

  it('a retry comes due with no commit to wake the worker: its own timer does', async () => {
    const committer = await stores.open();
    const receiver = await webhookReceiver(newSecret());
    receiver.behave((n) => (n === 1 ? { kind: 'status', status: 503 } : { kind: 'status', status: 204 }));
    // The schedule of deliverySettings: a retry 10 ms after a failure.
    deliveryWorker(await stores.another(committer), deliverySettings([receiver.url])).start();
    await commitRunWithChange(committer, [receiver.url]);

    await received(receiver, 2);
    expect(receiver.received.map((r) => r.id)).toEqual([receiver.received[0]?.id, receiver.received[0]?.id]);
  });
});
