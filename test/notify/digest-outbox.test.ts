import { describe, expect, it } from 'vitest';
import { notificationRowsOf } from '../../src/db/open-store.js';
import type { Store } from '../../src/db/store.js';
import { outboxOver, type NotificationOutbox } from '../../src/notify/outbox.js';
import { silentLogger } from '../../src/logger.js';
import { lastDigestPeriod } from '../../src/notify/digest.js';
import { writeDueDigest, type DigestSettings } from '../../src/notify/digest-outbox.js';
import type { NotifyMessage } from '../../src/notify/message.js';
import { sendMessage } from '../../src/notify/send.js';
import { keyedTargets, parseTarget, type NotifyTarget } from '../../src/notify/targets.js';
import { notifyWorker } from '../../src/notify/channel.js';
import { chatStandIn } from '../helpers/chat-stand-in.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeOpener, storeRows, type StoreOpener } from '../helpers/postgres.js';

/** Every row of a table, in the order of the columns named (either store). */
const tableRows = (store: Store, table: string, columns: string) =>
  storeRows(store, `select ${columns} from ${table} order by ${columns}`);

function outboxOf(store: Store): NotificationOutbox {
  const rows = notificationRowsOf(store);
  if (rows === null) throw new Error('this store keeps no notification outbox');
  return outboxOver(rows);
}

const at = (iso: string) => new Date(iso);

describe('the period a digest covers, in TZ (issue 22)', () => {
  it.each([
    ['hourly', '2026-11-24T10:05:00Z', 'UTC', '2026-11-24T09:00:00.000Z', '2026-11-24T10:00:00.000Z'],
    ['hourly', '2026-11-24T10:00:00Z', 'UTC', '2026-11-24T09:00:00.000Z', '2026-11-24T10:00:00.000Z'],
    // Kolkata is UTC+05:30: its hours end at :30 UTC.
    [
      'hourly',
      '2026-11-24T10:05:00Z',
      'Asia/Kolkata',
      '2026-11-24T08:30:00.000Z',
      '2026-11-24T09:30:00.000Z',
    ],
    // 08:00 in Paris is 07:00 UTC in winter; at 07:30 UTC the day that ended is the one before.
    [
      'daily@08:00',
      '2026-11-24T07:30:00Z',
      'Europe/Paris',
      '2026-11-23T07:00:00.000Z',
      '2026-11-24T07:00:00.000Z',
    ],
    [
      'daily@08:00',
      '2026-11-24T06:59:00Z',
      'Europe/Paris',
      '2026-11-22T07:00:00.000Z',
      '2026-11-23T07:00:00.000Z',
    ],
    // The day summer time ends in Paris (2026-10-25) lasts 25 hours.
    [
      'daily@08:00',
      '2026-10-25T08:00:00Z',
      'Europe/Paris',
      '2026-10-24T06:00:00.000Z',
      '2026-10-25T07:00:00.000Z',
    ],
  ] as const)('%s at %s in %s: from %s to %s', (every, now, zone, from, to) => {
    const digest =
      every === 'hourly' ? { every: 'hour' as const } : { every: 'day' as const, at: every.slice(6) };
    const period = lastDigestPeriod(at(now), digest, zone);
    expect({ from: period?.from.toISOString(), to: period?.to.toISOString() }).toEqual({ from, to });
  });
});

function target(entry: string): NotifyTarget {
  const parsed = parseTarget(entry);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

/**
 * Two runs with changes under NOTIFY_DIGEST=hourly, recorded at 09:10 and 09:40 UTC: the first adds
 * three coworkers to those of an earlier sync, or is the store's first sync (`firstSync`).
 */
async function twoRunsInOneHour(stores: StoreOpener, { firstSync = false } = {}) {
  const standIn = await chatStandIn(() => null);
  const entries = [`slack+${standIn.url}/services/T0/B0/secret`, `ntfy+${standIn.url}/team-topic`];
  const store = await stores.open();
  const targets = keyedTargets(entries.map(target), store.endpointKeys);
  const env = { NOTIFY_URLS: entries.join(','), NOTIFY_DIGEST: 'hourly' };
  const upstream = await simulatedUpstream({ seed: 31, count: 3 });
  if (!firstSync) {
    // Finished now, long after the period the tests look at.
    await sync(store, upstream, env);
    upstream.data.add(3);
  }
  const first = await sync(store, upstream, env);
  upstream.data.edit(1, 'post');
  const second = await sync(store, upstream, env);
  // A change's time is its run's: moving the run moves its changes.
  const moveRun = async (runId: number, iso: string) => {
    await storeRows(store, `update runs set finished_at = '${iso}' where id = ${runId}`);
  };
  await moveRun(first.runId, '2026-11-24T09:10:00.000Z');
  await moveRun(second.runId, '2026-11-24T09:40:00.000Z');
  const settings: DigestSettings = {
    digest: { every: 'hour' },
    targetIds: targets.map((t) => t.id),
    context: { baseUrl: 'https://mirror.example.com', timeZone: 'UTC' },
  };
  return { standIn, targets, store, settings, first, second };
}

describe.each(STORE_KINDS)(
  'NOTIFY_DIGEST=hourly|daily on %s: one message per target and period (issue 22)',
  (kind) => {
    const stores = storeOpener(kind);

    it("runs write none of their own; the period's digest is written once per target, by whichever instance", async () => {
      const { store, settings } = await twoRunsInOneHour(stores);
      expect(await tableRows(store, 'webhook_messages', 'type')).toEqual([]);

      const one = outboxOf(store);
      // Another instance's handle on the same database.
      const two = outboxOf(await stores.another(store));
      expect(await writeDueDigest(one, settings, at('2026-11-24T10:05:00Z'))).toBe(2);
      expect(await writeDueDigest(two, settings, at('2026-11-24T10:06:00Z'))).toBe(0);
      expect(await writeDueDigest(one, settings, at('2026-11-24T10:59:59Z'))).toBe(0);
      // The next hour had no change: nothing is written for it.
      expect(await writeDueDigest(two, settings, at('2026-11-24T11:05:00Z'))).toBe(0);

      const rows = (await tableRows(store, 'webhook_messages', 'webhook_id, type')) as {
        webhook_id: string;
        type: string;
      }[];
      expect(rows).toEqual(
        [...settings.targetIds].sort().map((id) => ({
          webhook_id: `digest_${id}_2026-11-24T10:00:00.000Z`,
          type: 'notify.changes',
        })),
      );
      const body = String((await storeRows(store, 'select body from webhook_messages order by id'))[0]?.body);
      const message = JSON.parse(body) as NotifyMessage;
      expect(message).toMatchObject({
        event: 'changes',
        title: 'Team page since 2026-11-24 09:00: 3 joined, 1 changed',
        footer: '2 runs up to 2026-11-24 10:00. Times in UTC.',
        link: {
          label: 'Every change of the period',
          url: 'https://mirror.example.com/changes/?since=2026-11-24T09%3A00%3A00.000Z',
        },
      });
      expect(message.lines).toHaveLength(4);
    });

    it('a period holding the first sync tells it as the count it is, then the later changes by name', async () => {
      const { store, settings, first } = await twoRunsInOneHour(stores, { firstSync: true });
      expect(await writeDueDigest(outboxOf(store), settings, at('2026-11-24T10:05:00Z'))).toBe(2);
      const coworkers = Number((await storeRows(store, 'select count(*) as n from coworkers'))[0]?.n);
      expect(coworkers).toBe(2);
      const bodies = await storeRows(store, 'select body from webhook_messages order by id');
      const message = JSON.parse(String(bodies[0]?.body)) as NotifyMessage;
      expect({ ...message, lines: message.lines.map((l) => l.rest) }).toEqual({
        event: 'changes',
        title: 'Team page since 2026-11-24 09:00: the mirror now follows 2 coworkers; then 1 changed',
        summary:
          `The mirror's first sync, run ${first.runId} at 2026-11-24 09:10, found 2 coworkers on the team ` +
          'page (3 entries: some are listed more than once). What changed after it follows.',
        lines: [expect.stringMatching(/^: post '.*' → '.*'$/) as string],
        more: null,
        link: { label: 'Coworkers', url: 'https://mirror.example.com/coworkers/' },
        footer: '2 runs up to 2026-11-24 10:00. Times in UTC.',
      });
      expect(JSON.stringify(message)).not.toMatch(/joined/i);
    });

    it('a period holding the first sync alone says the mirror now follows N coworkers', async () => {
      const { store, settings, first, second } = await twoRunsInOneHour(stores, { firstSync: true });
      // The later run moves to the next hour: the period of 09:00 holds the first sync alone.
      await storeRows(
        store,
        `update runs set finished_at = '2026-11-24T10:40:00.000Z' where id = ${second.runId}`,
      );
      expect(await writeDueDigest(outboxOf(store), settings, at('2026-11-24T10:05:00Z'))).toBe(2);
      const bodies = await storeRows(store, 'select body from webhook_messages order by id');
      expect(JSON.parse(String(bodies[0]?.body))).toEqual({
        event: 'changes',
        title: 'Team page since 2026-11-24 09:00: the mirror now follows 2 coworkers',
        summary:
          `The mirror's first sync, run ${first.runId} at 2026-11-24 09:10, found 2 coworkers on the team ` +
          'page (3 entries: some are listed more than once). From now on, messages say who joins, leaves, ' +
          'returns or changes.',
        lines: [],
        more: null,
        link: { label: 'Coworkers', url: 'https://mirror.example.com/coworkers/' },
        footer: '1 run up to 2026-11-24 10:00. Times in UTC.',
      });
    });

    it('the worker of start writes the due digest on its pass, and delivers it to each target', async () => {
      const { standIn, targets, store, settings } = await twoRunsInOneHour(stores);
      const deps = {
        outbox: outboxOf(store),
        targets,
        send: sendMessage,
        timeoutMs: 5000,
        sleep: () => Promise.resolve(),
        logger: silentLogger(),
        pollMs: 60_000,
      };
      const writer = notifyWorker({ ...deps, digest: settings, now: () => at('2026-11-24T10:05:00Z') });
      await writer.poke();
      await writer.stop();
      expect(await tableRows(store, 'webhook_deliveries', 'status')).toEqual([
        { status: 'pending' },
        { status: 'pending' },
      ]);
      // The rows are due from when they were written, by the real clock.
      const sender = notifyWorker(deps);
      await sender.poke();
      await sender.stop();
      expect(standIn.requests).toHaveLength(2);
      for (const request of standIn.requests) expect(request.body).toContain('3 joined, 1 changed');
      expect(await tableRows(store, 'webhook_deliveries', 'status')).toEqual([
        { status: 'succeeded' },
        { status: 'succeeded' },
      ]);
    });
  },
);
