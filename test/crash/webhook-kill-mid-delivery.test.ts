import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { cliDatabases, STORE_KINDS, type CliDatabase } from '../helpers/postgres.js';
import { newSecret, webhookReceiver } from '../helpers/webhook-receiver.js';

beforeAll(() => ensureBuilt());

async function deliveryFacts(db: CliDatabase) {
  return (await db.rows(
    `select m.webhook_id as "webhookId", d.status, d.attempts from webhook_deliveries d
       join webhook_messages m on m.id = d.message_id order by d.id`,
  )) as { webhookId: string; status: string; attempts: number }[];
}

describe.each(STORE_KINDS)('a `start` SIGKILLed in the middle of a delivery on %s', (kind) => {
  const database = cliDatabases(kind);

  it('delivers it after the restart, under the same webhook-id, signed', async () => {
    const upstream = await simulatedUpstream({ seed: 31, count: 12 });
    const secret = newSecret();
    const receiver = await webhookReceiver(secret);
    // The first request is never answered: the process dies while it waits.
    receiver.behave((n) => (n === 1 ? { kind: 'hang' } : { kind: 'status', status: 204 }));
    const db = await database();
    const env = {
      UPSTREAM_URL: upstream.url,
      ...db.env,
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
    expect(await deliveryFacts(db)).toEqual([
      { webhookId: receiver.received[0]?.id, status: 'pending', attempts: 0 },
    ]);

    // The mirror is fresh, so the restart syncs nothing: it only finds the pending delivery, once
    // the dead process's lease (WEBHOOK_TIMEOUT + 2 s) has run out.
    const second = runCli(['start', '--port', '0'], env);
    await receiver.waitForRequests(2);
    const facts = await eventually(async () => {
      const rows = await deliveryFacts(db);
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
