import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { tempDir } from '../helpers/temp-db.js';
import { webhookReceiver } from '../helpers/webhook-receiver.js';
import {
  deliverySettings,
  deliveryWorker,
  recordRunWithChange,
  webhookIds,
} from '../helpers/webhook-runs.js';

const RUNS = 1_000;

describe('1,000 runs with changes', () => {
  it('make 1,000 deliveries: none lost, none sent again but after a failed attempt, all in order', async () => {
    const file = join(tempDir(), 'mirror.db');
    // Three connections, as in production: the sync's, and two workers (`start` and a `sync` CLI).
    const writer = openDatabase(file);
    const first = openDatabase(file);
    const second = openDatabase(file);
    const receiver = await webhookReceiver(null);
    // Every 7th request fails with a 500; every 11th is handled, then the connection drops before
    // the answer: the sender cannot know, so it sends again (at-least-once).
    receiver.behave((n) =>
      n % 7 === 0
        ? { kind: 'status', status: 500 }
        : n % 11 === 0
          ? { kind: 'status', status: 200, drop: true }
          : { kind: 'status', status: 200 },
    );
    const settings = deliverySettings([receiver.url], { retryScheduleMs: [5, 5, 5, 5, 5] });
    const workers = [deliveryWorker(first, settings), deliveryWorker(second, settings)];
    try {
      for (const worker of workers) worker.start();
      for (let i = 0; i < RUNS; i++) {
        await recordRunWithChange(writer, [receiver.url]);
        if (i % 20 === 0) await yieldToLoop();
      }
      for (const worker of workers) expect(await worker.drain(60_000)).toBe(0);

      const ids = webhookIds(writer);
      expect(ids).toHaveLength(RUNS);
      expect(new Set(ids).size).toBe(RUNS);
      // None lost: every message acknowledged.
      expect(new Set(receiver.acknowledged)).toEqual(new Set(ids));
      // None duplicated beyond retries: each id arrived exactly as many times as attempts were made.
      const arrivals = new Map<string, number>();
      for (const r of receiver.received) arrivals.set(r.id, (arrivals.get(r.id) ?? 0) + 1);
      const attempts = writer.sqlite
        .prepare(
          `select m.webhook_id as id, count(a.id) as n from webhook_messages m
             join webhook_deliveries d on d.message_id = m.id
             join webhook_attempts a on a.delivery_id = d.id group by m.webhook_id`,
        )
        .all() as { id: string; n: number }[];
      expect(Object.fromEntries(arrivals)).toEqual(Object.fromEntries(attempts.map((a) => [a.id, a.n])));
      const failedAttempts = attempts.reduce((sum, a) => sum + a.n - 1, 0);
      expect(receiver.received.length).toBe(RUNS + failedAttempts);
      // In order: each message is first seen only after every older one was acknowledged.
      const firstSeen = [...new Set(receiver.received.map((r) => r.id))];
      expect(firstSeen).toEqual(ids);
      expect(
        writer.sqlite
          .prepare("select count(*) from webhook_deliveries where status = 'succeeded'")
          .pluck()
          .get(),
      ).toBe(RUNS);
    } finally {
      for (const worker of workers) await worker.stop();
      for (const store of [writer, first, second]) store.close();
    }
  });
});
