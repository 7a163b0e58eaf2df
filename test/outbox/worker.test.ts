import { describe, expect, it, onTestFinished } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/logger.js';
import { notifyChannel, notifyWorker } from '../../src/notify/channel.js';
import { sendMessage } from '../../src/notify/send.js';
import type { SendOutcome } from '../../src/notify/send.js';
import { OutboxWorker } from '../../src/outbox/worker.js';
import { webhookChannel } from '../../src/webhooks/channel.js';
import { chatStandIn } from '../helpers/chat-stand-in.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { newSecret, webhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverySettings } from '../helpers/webhook-runs.js';
import { parsedTargets, workerDeps } from '../notify/worker-rig.js';

const statuses = async (store: Store) =>
  storeRows(
    store,
    `select e.channel, d.status, d.attempts from webhook_deliveries d
       join webhook_endpoints e on e.id = d.endpoint_id order by d.id`,
  );

describe.each(STORE_KINDS)('one outbox worker for every channel (%s)', (kind) => {
  const fresh = storeMaker(kind);

  it("one worker sends a run's webhook and its notification, each through its own sender, and records both", async () => {
    const store = await fresh();
    const secret = newSecret();
    const receiver = await webhookReceiver(secret);
    const chat = await chatStandIn(() => null);
    const entries = [`slack+${chat.url}/services/T0/B0/secret`];
    const upstream = await simulatedUpstream({ seed: 11, count: 4 });
    await sync(store, upstream);
    upstream.data.edit(1, 'post');
    await sync(store, upstream, { WEBHOOK_URLS: receiver.url, NOTIFY_URLS: entries.join(',') });

    const worker = new OutboxWorker({
      channels: [
        webhookChannel({ store, settings: deliverySettings([receiver.url], { secret }) }),
        notifyChannel(workerDeps(store, parsedTargets(entries))),
      ],
      logger: silentLogger(),
      store,
    });
    onTestFinished(() => worker.stop());
    expect(await worker.drain(5_000)).toBe(0);

    expect(
      receiver.received.map((r) => [r.verifiedBySpec, (JSON.parse(r.body) as { type: string }).type]),
    ).toEqual([[true, 'coworkers.changed']]);
    expect(chat.requests).toHaveLength(1);
    expect(chat.requests[0]?.body).not.toContain('webhook-signature');
    expect(await statuses(store)).toEqual([
      { channel: 'webhook', status: 'succeeded', attempts: 1 },
      { channel: 'notify', status: 'succeeded', attempts: 1 },
    ]);
  });

  it("a target that does not answer holds back no other target's message", async () => {
    const store = await fresh();
    const chat = await chatStandIn(() => null);
    const entries = [`slack+${chat.url}/services/T0/B0/secret`, `ntfy+${chat.url}/team-topic`];
    const upstream = await simulatedUpstream({ seed: 12, count: 4 });
    await sync(store, upstream);
    upstream.data.edit(2, 'post');
    await sync(store, upstream, { NOTIFY_URLS: entries.join(',') });

    let answerSlack: (outcome: SendOutcome) => void = () => undefined;
    let ntfySent: () => void = () => undefined;
    const ntfyDone = new Promise<void>((resolve) => (ntfySent = resolve));
    const worker = notifyWorker({
      ...workerDeps(store, parsedTargets(entries)),
      // Slack's row is the older one: sent first, it hangs until the ntfy message went out.
      send: async (message, target, options) => {
        if (target.kind === 'slack') return new Promise<SendOutcome>((resolve) => (answerSlack = resolve));
        const outcome = await sendMessage(message, target, options);
        ntfySent();
        return outcome;
      },
    });
    const slackOk: SendOutcome = {
      status: 'ok',
      httpStatus: 200,
      retryAfterMs: null,
      detail: 'answered 200',
      durationMs: 1,
    };
    // A worker that sends one target at a time waits here for ever: the test's end lets Slack answer.
    onTestFinished(async () => {
      answerSlack(slackOk);
      await worker.stop();
    });
    const passing = worker.poke();
    await ntfyDone;
    answerSlack(slackOk);
    await passing;

    // Slack's answer was the stand-in's above: the one request that reached the service is ntfy's.
    expect(chat.requests).toHaveLength(1);
    expect(await statuses(store)).toEqual([
      { channel: 'notify', status: 'succeeded', attempts: 1 },
      { channel: 'notify', status: 'succeeded', attempts: 1 },
    ]);
  });
});
