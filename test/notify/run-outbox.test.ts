import { describe, expect, it, onTestFinished } from 'vitest';
import { localClock, MAX_LINES, type NotifyMessage } from '../../src/notify/message.js';
import { keyedTargets, type NotifyTarget } from '../../src/notify/targets.js';
import { sendMessage } from '../../src/notify/send.js';
import { notifyWorker } from '../../src/notify/channel.js';
import type { OutboxWorker } from '../../src/outbox/worker.js';
import { chatStandIn, type StandIn } from '../helpers/chat-stand-in.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { eventually } from '../helpers/process.js';
import type { Store } from '../../src/db/store.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { parsedTargets, workerDeps } from './worker-rig.js';

/** Every row of a table, in the order of the columns named (either store). */
const tableRows = (store: Store, table: string, columns: string) =>
  storeRows(store, `select ${columns} from ${table} order by ${columns}`);
const firstBody = async (store: Store): Promise<string> =>
  String((await storeRows(store, 'select body from webhook_messages order by id'))[0]?.body);

const accept = () => null;

async function twoTargets(): Promise<{ standIn: StandIn; urls: string; targets: NotifyTarget[] }> {
  const standIn = await chatStandIn(accept);
  const entries = [`slack+${standIn.url}/services/T0/B0/secret`, `ntfy+${standIn.url}/team-topic`];
  return { standIn, urls: entries.join(','), targets: parsedTargets(entries) };
}

function worker(store: Store, targets: NotifyTarget[]): OutboxWorker {
  return notifyWorker(workerDeps(store, targets));
}

describe.each(STORE_KINDS)('notifications sent by runs (issue 22) on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('a run with changes writes one row per target in its transaction; the worker delivers each once', async () => {
    const store = await fresh();
    const { standIn, urls, targets } = await twoTargets();
    const upstream = await simulatedUpstream({ seed: 7, count: 12 });
    await sync(store, upstream);
    upstream.data.edit(2, 'post');
    upstream.data.remove(1);
    const second = await sync(store, upstream, { NOTIFY_URLS: urls });

    const endpoints = (await tableRows(store, 'webhook_endpoints', 'url')) as { url: string }[];
    const ids = keyedTargets(targets, store.endpointKeys).map((t) => t.id);
    expect(endpoints.map((e) => e.url).sort()).toEqual(ids.map((id) => `notify:${id}`).sort());
    const rows = await tableRows(store, 'webhook_messages', 'type, run_id');
    expect(rows).toEqual([{ type: 'notify.changes', run_id: second.runId }]);
    // The rows share the webhook outbox, but the webhook views (deliveries, status page, metrics)
    // are the webhooks' alone.
    expect(await tableRows(store, 'webhook_deliveries', 'status')).toHaveLength(targets.length);
    expect(await store.listDeliveries({ limit: 10 })).toEqual([]);
    expect(await store.countDeliveries({})).toBe(0);

    const w = worker(store, targets);
    await w.poke();
    await w.poke();
    await w.stop();
    expect(standIn.requests).toHaveLength(2);
    const names = await changedNames(store, second.runId);
    expect(names.length).toBeGreaterThan(0);
    for (const request of standIn.requests) {
      for (const name of names) expect(request.body).toContain(jsonText(name));
    }
    expect(await tableRows(store, 'webhook_deliveries', 'status')).toEqual([
      { status: 'succeeded' },
      { status: 'succeeded' },
    ]);
  });

  it('a run of more changes than lines counts them all and words the first ones by name', async () => {
    const store = await fresh();
    const { urls } = await twoTargets();
    const upstream = await simulatedUpstream({ seed: 3, count: 2 });
    await sync(store, upstream);
    upstream.data.add(25);
    await sync(store, upstream, { NOTIFY_URLS: urls });
    const body = await firstBody(store);
    const message = JSON.parse(body) as NotifyMessage;
    expect(message.title).toContain('25 joined');
    expect(message.lines).toHaveLength(MAX_LINES);
    expect(message.more?.count).toBe(25 - MAX_LINES);
    for (const line of message.lines) expect(line.who).not.toBe('');
  });

  it('a stop mid-pass sends no more and hands the rest back, which the next worker sends at once', async () => {
    const store = await fresh();
    const { standIn, urls, targets } = await twoTargets();
    const upstream = await simulatedUpstream({ seed: 4, count: 3 });
    await sync(store, upstream, { NOTIFY_URLS: urls });
    let stopping: Promise<void> | null = null;
    const first: OutboxWorker = notifyWorker({
      ...workerDeps(store, targets),
      send: (message, target, options) => {
        stopping ??= first.stop();
        return sendMessage(message, target, options);
      },
    });
    await first.poke();
    await (stopping as Promise<void> | null);
    expect(standIn.requests).toHaveLength(1);
    expect(await tableRows(store, 'webhook_deliveries', 'id, status, lease_until')).toEqual([
      { id: 1, status: 'succeeded', lease_until: null },
      { id: 2, status: 'pending', lease_until: null },
    ]);
    const next = worker(store, targets);
    await next.poke();
    await next.stop();
    expect(standIn.requests).toHaveLength(2);
  });

  it("a started worker sends a run's messages when the run commits, long before its next poll", async () => {
    const store = await fresh();
    const { standIn, urls, targets } = await twoTargets();
    const upstream = await simulatedUpstream({ seed: 5, count: 6 });
    await sync(store, upstream);
    // Polls once a minute: only the commit can wake it within the wait below.
    const started = notifyWorker({
      ...workerDeps(store, targets),
      watchCommits: (onCommit) => store.watchCommits(onCommit, { pollMs: 50 }),
    });
    started.start();
    onTestFinished(() => started.stop());
    upstream.data.edit(1, 'post');
    await sync(store, upstream, { NOTIFY_URLS: urls });

    await eventually(
      () => (standIn.requests.length === 2 ? true : undefined),
      10_000,
      'one message per target',
    );
  });

  it('a failed run writes no changes message, though its listing changed upstream', async () => {
    const store = await fresh();
    const { urls } = await twoTargets();
    const upstream = await simulatedUpstream({ seed: 9, count: 5 });
    await sync(store, upstream);
    upstream.data.add(1);
    upstream.faults.set({ invalidJson: { page: 1 } });
    await expect(sync(store, upstream, { NOTIFY_URLS: urls })).rejects.toThrow();
    const types = (await tableRows(store, 'webhook_messages', 'type')) as { type: string }[];
    expect(types.filter((t) => t.type === 'notify.changes')).toEqual([]);
  });

  it('a failure message says since when the streak began and which snapshot is still served', async () => {
    const store = await fresh();
    const { urls } = await twoTargets();
    const upstream = await simulatedUpstream({ seed: 9, count: 5 });
    const good = await sync(store, upstream);
    upstream.faults.set({ invalidJson: { page: 1 } });
    const env = { NOTIFY_URLS: urls, WEBHOOK_FAILURE_THRESHOLD: '3' };
    // Runs a minute apart or more, so each time the message could name is told apart.
    const setTime = (column: string, id: number, iso: string) =>
      storeRows(store, `update runs set ${column} = '${iso}' where id = ${id}`);
    await setTime('finished_at', good.runId, '2026-11-24T08:50:00.000Z');
    for (let i = 0; i < 3; i++) {
      await expect(sync(store, upstream, env)).rejects.toThrow();
      if (i < 2) await setTime('started_at', good.runId + 1 + i, `2026-11-24T09:${10 + i * 10}:00.000Z`);
    }
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const body = await firstBody(store);
    const message = JSON.parse(body) as NotifyMessage;
    // The streak began with the first failed run, not with the one that reached the threshold.
    expect(message.summary).toMatch(
      new RegExp(
        `^The mirror has failed 3 runs in a row since ${localClock('2026-11-24T09:10:00Z', zone)}: .+\\. ` +
          `It keeps serving the snapshot of ${localClock('2026-11-24T08:50:00Z', zone)}\\.$`,
      ),
    );
  });

  it('a permanent refusal fails the row and disables the target; its later rows wait', async () => {
    const store = await fresh();
    const { standIn, urls, targets } = await twoTargets();
    standIn.answer(404, {}, 'no_service');
    const upstream = await simulatedUpstream({ seed: 5, count: 6 });
    await sync(store, upstream, { NOTIFY_URLS: urls });
    const w = worker(store, targets);
    await w.poke();
    expect(standIn.requests).toHaveLength(2);
    upstream.data.edit(1, 'post');
    await sync(store, upstream, { NOTIFY_URLS: urls });
    await w.poke();
    await w.stop();
    expect(standIn.requests).toHaveLength(2);
    const endpoints = (await tableRows(store, 'webhook_endpoints', 'disabled_reason')) as {
      disabled_reason: string | null;
    }[];
    expect(endpoints.map((e) => e.disabled_reason)).toEqual([
      expect.stringContaining('404'),
      expect.stringContaining('404'),
    ]);
    expect(await tableRows(store, 'webhook_deliveries', 'id, status')).toEqual([
      { id: 1, status: 'failed' },
      { id: 2, status: 'failed' },
      { id: 3, status: 'pending' },
      { id: 4, status: 'pending' },
    ]);
  });
});

/** The names of the coworkers a run changed, as its stored versions say. */
async function changedNames(store: Store, runId: number): Promise<string[]> {
  const uuids = (await storeRows(store, `select distinct uuid from changes where run_id = ${runId}`)).map(
    (r) => String(r.uuid),
  );
  const names = await store.namesOf(uuids);
  return uuids.map((uuid) => names.get(uuid) ?? '');
}

/** A name as it appears inside a JSON string (quotes and backslashes escaped). */
function jsonText(name: string): string {
  return JSON.stringify(name).slice(1, -1);
}
