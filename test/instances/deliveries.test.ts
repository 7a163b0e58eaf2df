import { beforeAll, expect, it } from 'vitest';
import type pg from 'pg';
import { describePostgres, usePostgres } from '../helpers/postgres.js';
import { ensureBuilt, eventually } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { newSecret, webhookReceiver } from '../helpers/webhook-receiver.js';
import { killInstance, startInstance } from './instances.js';

beforeAll(() => ensureBuilt(), 120_000);

interface DeliveryFacts {
  webhookId: string;
  status: string;
  attempts: number;
}

async function deliveries(admin: pg.Pool): Promise<DeliveryFacts[]> {
  const { rows } = await admin.query<DeliveryFacts>(
    `select m.webhook_id as "webhookId", d.status, d.attempts from webhook_deliveries d
       join webhook_messages m on m.id = d.message_id order by d.id`,
  );
  return rows;
}

/** The deliveries once none is pending; each one's attempts are those the receiver saw. */
function untilAllSent(admin: pg.Pool): Promise<DeliveryFacts[]> {
  return eventually(async () => {
    const rows = await deliveries(admin);
    return rows.length > 0 && rows.every((r) => r.status === 'succeeded') ? rows : undefined;
  });
}

describePostgres('webhook deliveries with several instances on one PostgreSQL', () => {
  const pg = usePostgres();

  it('two instances, one receiver: each delivery is received once', async () => {
    const name = await pg.server.createDatabase();
    const upstream = await simulatedUpstream({ seed: 40, count: 8 });
    const secret = newSecret();
    const receiver = await webhookReceiver(secret);
    const env = { WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: secret };
    const [a, b] = await Promise.all([
      startInstance(pg.server.url(name), upstream.url, env),
      startInstance(pg.server.url(name), upstream.url, env),
    ]);
    // The startup run's messages, then another run's, asked of each instance in turn.
    await untilAllSent(pg.server.admin(name));
    upstream.data.edit(2);
    // 409 while the startup run is still ending (here or on the other instance): asked again.
    await eventually(async () => ((await a.trigger()).status === 202 ? true : undefined));
    await eventually(async () => ((await deliveries(pg.server.admin(name))).length > 1 ? true : undefined));
    upstream.data.add(1);
    await eventually(async () => ((await b.trigger()).status === 202 ? true : undefined));
    const rows = await eventually(async () => {
      const all = await untilAllSent(pg.server.admin(name));
      return all.length >= 3 ? all : undefined;
    });
    expect(rows.every((r) => r.attempts === 1)).toBe(true);
    const ids = receiver.received.map((r) => r.id);
    expect(ids).toEqual([...new Set(ids)]);
    expect(new Set(ids)).toEqual(new Set(rows.map((r) => r.webhookId)));
  });

  it('the instance sending a delivery is SIGKILLed mid-request: another one delivers it, same webhook-id', async () => {
    const name = await pg.server.createDatabase();
    const upstream = await simulatedUpstream({ seed: 41, count: 8 });
    const secret = newSecret();
    const receiver = await webhookReceiver(secret);
    // The first request is never answered: its sender dies while it waits.
    receiver.behave((n) => (n === 1 ? { kind: 'hang' } : { kind: 'status', status: 204 }));
    const env = { WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: secret, WEBHOOK_TIMEOUT: '10s' };
    const a = await startInstance(pg.server.url(name), upstream.url, env);
    await receiver.waitForRequests(1);
    // B starts while A holds the delivery's lease, so B alone can send it: after the lease runs out.
    await startInstance(pg.server.url(name), upstream.url, env);
    killInstance(a);
    const rows = await untilAllSent(pg.server.admin(name));
    const first = receiver.received[0]?.id;
    // At least once: sent again under its id (how many attempts A recorded before it died varies).
    expect(rows.find((r) => r.webhookId === first)).toMatchObject({ webhookId: first, status: 'succeeded' });
    expect(receiver.received.filter((r) => r.id === first).length).toBeGreaterThanOrEqual(2);
    expect(a.proc.output()).not.toContain(secret.slice(6));
    expect(receiver.received.every((r) => r.verifiedBySpec)).toBe(true);
  });
});
