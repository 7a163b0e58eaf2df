import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { cliDatabases, STORE_KINDS, type CliDatabase } from '../helpers/postgres.js';
import { webhookReceiver } from '../helpers/webhook-receiver.js';

beforeAll(() => ensureBuilt());

const statuses = async (db: CliDatabase) =>
  (await db.rows('select status from webhook_deliveries order by id')).map((r) => r.status);

describe.each(STORE_KINDS)('coworker-mirror sync with WEBHOOK_URLS (the built CLI) on %s', (kind) => {
  const database = cliDatabases(kind);

  it('delivers after its commit within a bounded wait, and leaves the rest to the next process', async () => {
    const upstream = await simulatedUpstream({ seed: 5, count: 9 });
    const receiver = await webhookReceiver(null);
    let answering = false;
    receiver.behave(() => (answering ? { kind: 'status', status: 200 } : { kind: 'hang' }));
    const db = await database();
    const env = {
      UPSTREAM_URL: upstream.url,
      ...db.env,
      WEBHOOK_URLS: receiver.url,
      WEBHOOK_TIMEOUT: '500ms',
      WEBHOOK_RETRY_SCHEDULE: '1h',
    };

    // A receiver that never answers: the sync still ends (exit 0), the delivery left pending.
    const hanging = runCli(['sync'], env);
    expect(await hanging.exited).toEqual({ code: 0, signal: null });
    expect(hanging.output()).toContain('"msg":"webhook attempt failed; will retry"');
    expect(hanging.output()).toContain('"msg":"webhook deliveries left pending for the next process"');
    expect(await statuses(db)).toEqual(['pending']);

    // Queued again by hand, the next sync (which has nothing new) sends it.
    answering = true;
    const redeliver = runCli(['deliveries', 'redeliver', '1'], env);
    expect(await redeliver.exited).toEqual({ code: 0, signal: null });
    const next = runCli(['sync'], env);
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(await statuses(db)).toEqual(['succeeded']);
    expect(receiver.received.map((r) => r.id)).toEqual([receiver.received[0]?.id, receiver.received[0]?.id]);
  });

  it('with NOTIFY_URLS too, sends both channels in one pass: the webhook waits on the notification, and both go', async () => {
    const upstream = await simulatedUpstream({ seed: 6, count: 5 });
    const chat = await webhookReceiver(null);
    chat.behave(() => ({ kind: 'status', status: 200, body: 'ok' }));
    const receiver = await webhookReceiver(null);
    // Answered only once the notification has come: a pass per channel, webhooks first, would wait
    // out WEBHOOK_TIMEOUT here and leave the delivery pending before sending any notification.
    receiver.behave(async () => {
      await chat.waitForRequests(1);
      return { kind: 'status', status: 200 };
    });
    const db = await database();
    const sync = runCli(['sync'], {
      UPSTREAM_URL: upstream.url,
      ...db.env,
      WEBHOOK_URLS: receiver.url,
      WEBHOOK_TIMEOUT: '30s',
      WEBHOOK_RETRY_SCHEDULE: '1h',
      NOTIFY_URLS: `slack+${chat.url}/services/T0/B0/secret`,
      NOTIFY_SEND_TIMEOUT: '2m',
    });

    expect(await sync.exited).toEqual({ code: 0, signal: null });
    expect(
      await db.rows(
        `select e.channel, d.status, d.attempts from webhook_deliveries d
           join webhook_endpoints e on e.id = d.endpoint_id order by e.channel`,
      ),
    ).toEqual([
      { channel: 'notify', status: 'succeeded', attempts: 1 },
      { channel: 'webhook', status: 'succeeded', attempts: 1 },
    ]);
    expect([receiver.received.length, chat.received.length]).toEqual([1, 1]);
    expect(sync.output()).not.toContain('left pending');
    expect(sync.output()).not.toContain('coworker-mirror: notification');
  });

  it('with NOTIFY_URLS too, the pass ends at the earlier NOTIFY_SEND_TIMEOUT: the webhook attempt is handed back', async () => {
    const upstream = await simulatedUpstream({ seed: 7, count: 4 });
    const chat = await webhookReceiver(null);
    chat.behave(() => ({ kind: 'hang' }));
    const receiver = await webhookReceiver(null);
    receiver.behave(() => ({ kind: 'hang' }));
    const db = await database();
    const sync = runCli(['sync'], {
      UPSTREAM_URL: upstream.url,
      ...db.env,
      WEBHOOK_URLS: receiver.url,
      WEBHOOK_TIMEOUT: '2m',
      WEBHOOK_RETRY_SCHEDULE: '1h',
      NOTIFY_URLS: `slack+${chat.url}/services/T0/B0/secret`,
      NOTIFY_SEND_TIMEOUT: '5s',
    });

    expect(await sync.exited).toEqual({ code: 0, signal: null });
    // The webhook's own deadline is far off: stopped with the pass, its attempt is neither logged
    // nor counted, and the delivery waits for `start` or the next sync.
    expect(
      await db.rows(
        `select d.status, d.attempts from webhook_deliveries d
           join webhook_endpoints e on e.id = d.endpoint_id where e.channel = 'webhook'`,
      ),
    ).toEqual([{ status: 'pending', attempts: 0 }]);
    expect(sync.output()).toContain('"msg":"webhook deliveries left pending for the next process"');
    expect(sync.output()).toContain('1 notification stays in the outbox for the next sync or start');
  });
});
