import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { newSecret, webhookReceiver } from '../helpers/webhook-receiver.js';

beforeAll(() => ensureBuilt());

function deliveryFacts(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(
        `select m.webhook_id as webhookId, d.status, d.attempts from webhook_deliveries d
           join webhook_messages m on m.id = d.message_id order by d.id`,
      )
      .all() as { webhookId: string; status: string; attempts: number }[];
  } finally {
    db.close();
  }
}

describe('a `start` SIGKILLed in the middle of a delivery', () => {
  it('delivers it after the restart, under the same webhook-id, signed', async () => {
    const upstream = await simulatedUpstream({ seed: 31, count: 12 });
    const secret = newSecret();
    const receiver = await webhookReceiver(secret);
    // The first request is never answered: the process dies while it waits.
    receiver.behave((n) => (n === 1 ? { kind: 'hang' } : { kind: 'status', status: 204 }));
    const db = join(tempDir(), 'mirror.db');
    const env = {
      UPSTREAM_URL: upstream.url,
      DATABASE_PATH: db,
      LOG_LEVEL: 'info',
      SYNC_CRON: '0 0 1 1 *',
      WEBHOOK_URLS: receiver.url,
      WEBHOOK_SECRET: secret,
      WEBHOOK_TIMEOUT: '2s',
    };

    const first = runCli(['start', '--port', '0'], env);
    await receiver.waitForRequests(1);
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(first.output()).not.toContain(secret.slice(6));
    expect(deliveryFacts(db)).toEqual([
      { webhookId: receiver.received[0]?.id, status: 'pending', attempts: 0 },
    ]);

    // The mirror is fresh, so the restart syncs nothing: it only finds the pending delivery, once
    // the dead process's lease (WEBHOOK_TIMEOUT + 2 s) has run out.
    const second = runCli(['start', '--port', '0'], env);
    await receiver.waitForRequests(2);
    const facts = await eventually(() => {
      const rows = deliveryFacts(db);
      return rows[0]?.status === 'succeeded' ? rows : undefined;
    });
    expect(facts).toEqual([{ webhookId: receiver.received[0]?.id, status: 'succeeded', attempts: 1 }]);
    expect(receiver.received.map((r) => [r.id, r.verifiedBySpec, r.verifiedByLibrary])).toEqual([
      [facts[0]?.webhookId, true, true],
      [facts[0]?.webhookId, true, true],
    ]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(second.output()).not.toContain(secret.slice(6));
    expect(second.output()).toContain('"msg":"webhook delivered"');
  });
});
