import { describe, expect, it } from 'vitest';
import { changesMessage, failureMessage } from '../../src/notify/message.js';
import { deliverDue } from '../../src/notify/channel.js';
import {
  outboxRows,
  type NotificationOutbox,
  type NotificationResult,
  type OutboxNotification,
} from '../../src/notify/outbox.js';
import { sendMessage } from '../../src/notify/send.js';
import { EndpointKeys } from '../../src/db/endpoint-keys.js';
import { keyedTargets, parseTarget, type KeyedTarget } from '../../src/notify/targets.js';
import { chatStandIn } from '../helpers/chat-stand-in.js';

/** The interface's contract kept in memory: what the store's operations will do in SQL. */
class MemoryOutbox implements NotificationOutbox {
  rows: (OutboxNotification & { runId: number; status: string; nextAt: number; detail: string })[] = [];
  disabled = new Map<string, string>();
  enqueue(runId: number, rows: readonly { targetId: string; message: OutboxNotification['message'] }[]) {
    for (const r of rows) {
      this.rows.push({
        ...r,
        id: this.rows.length + 1,
        runId,
        attempts: 0,
        status: 'pending',
        nextAt: 0,
        detail: '',
      });
    }
    return Promise.resolve();
  }
  claim(now: Date, limit: number) {
    const due = this.rows.filter(
      (r) => r.status === 'pending' && r.nextAt <= now.getTime() && !this.disabled.has(r.targetId),
    );
    return Promise.resolve(due.slice(0, limit).map((r) => ({ ...r })));
  }
  complete(id: number, result: NotificationResult) {
    const row = this.rows.find((r) => r.id === id);
    if (row) {
      row.attempts++;
      row.status = result.status === 'target_disabled' ? 'failed' : result.status;
      row.detail = result.detail;
      if (result.status === 'pending') row.nextAt = result.nextAttemptAt.getTime();
    }
    return Promise.resolve();
  }
  disableTarget(targetId: string, reason: string) {
    this.disabled.set(targetId, reason);
    return Promise.resolve();
  }
}

const ctx = { baseUrl: null, timeZone: 'UTC' };
const changes = changesMessage(
  {
    runId: 3,
    finishedAt: '2026-11-24T08:00:00Z',
    changes: [
      { kind: 'removed', field: null, old: null, new: null, uuid: 'u', slot: 0, name: 'Kate', post: '' },
    ],
  },
  ctx,
);
const failure = failureMessage(
  { failedRuns: 3, since: '2026-11-24T07:00:00Z', reason: 'upstream answered 503', servingSince: null },
  ctx,
);

/** The keys of a store no row was written to: the targets' ids as such a store gives them. */
const keys = EndpointKeys.unmatched();

function chat(url: string): KeyedTarget {
  const target = parseTarget(url);
  if (typeof target === 'string') throw new Error(target);
  const [keyed] = keyedTargets([target], keys);
  if (keyed === undefined) throw new Error('not keyed');
  return keyed;
}

describe('notifications through an outbox (issue 22)', () => {
  it('one row per message the events let through and per target, the target by id alone', () => {
    const a = chat('slack+http://127.0.0.1:1/a/SECRET');
    const b = chat('ntfy+http://127.0.0.1:1/SECRET');
    const rows = outboxRows([changes, failure], [a, b], ['changes']);
    expect(rows.map((r) => [r.targetId, r.message.event])).toEqual([
      [a.id, 'changes'],
      [b.id, 'changes'],
    ]);
    expect(JSON.stringify(rows)).not.toContain('SECRET');
  });

  it('delivers, retries after Retry-After, and disables a target the service deleted', async () => {
    const ok = await chatStandIn(() => null);
    const limited = await chatStandIn(() => null);
    limited.answer(429, { 'retry-after': '600' }, 'slow down');
    const gone = await chatStandIn(() => null);
    gone.answer(410, {}, 'channel_is_archived');
    const targets = [chat(`slack+${ok.url}/a`), chat(`slack+${limited.url}/b`), chat(`slack+${gone.url}/c`)];
    const outbox = new MemoryOutbox();
    await outbox.enqueue(3, outboxRows([changes], targets, ['changes']));
    let clock = new Date('2026-11-24T08:00:00Z');
    const deps = { outbox, targets, send: sendMessage, timeoutMs: 5000, now: () => clock, random: () => 0.5 };

    expect(await deliverDue(deps)).toBe(3);
    expect(outbox.rows.map((r) => [r.status, r.attempts, r.nextAt])).toEqual([
      ['delivered', 1, 0],
      // The schedule says 5 s; the service asked for 600 s.
      ['pending', 1, clock.getTime() + 600_000],
      ['failed', 1, 0],
    ]);
    expect([...outbox.disabled]).toEqual([[targets[2]?.id, 'answered 410: channel_is_archived']]);

    expect(await deliverDue(deps)).toBe(0);
    limited.answer(200, {}, 'ok');
    clock = new Date(clock.getTime() + 600_000);
    expect(await deliverDue(deps)).toBe(1);
    expect(outbox.rows[1]).toMatchObject({ status: 'delivered', attempts: 2 });
    expect([ok.requests.length, limited.requests.length, gone.requests.length]).toEqual([1, 2, 1]);
  });

  it("paces a backlog to one target by the service's limit, without waiting between targets", async () => {
    const slack = await chatStandIn(() => null);
    const ntfy = await chatStandIn(() => null);
    const targets = [chat(`slack+${slack.url}/a`), chat(`ntfy+${ntfy.url}/topic`)];
    const outbox = new MemoryOutbox();
    for (let run = 1; run <= 3; run++) await outbox.enqueue(run, outboxRows([changes], targets, ['changes']));
    let clock = Date.parse('2026-11-24T08:00:00Z');
    const waits: number[] = [];
    const deps = {
      outbox,
      targets,
      send: sendMessage,
      timeoutMs: 5000,
      now: () => new Date(clock),
      sleep: (ms: number) => {
        waits.push(ms);
        clock += ms;
        return Promise.resolve();
      },
    };
    expect(await deliverDue(deps)).toBe(6);
    expect(waits).toEqual([1000, 1000]);
    expect(outbox.rows.every((r) => r.status === 'delivered')).toBe(true);
    expect([slack.requests.length, ntfy.requests.length]).toEqual([3, 3]);
  });
});
