import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { localClock, type NotifyMessage } from '../../src/notify/message.js';
import type { NotifyTarget } from '../../src/notify/targets.js';
import { notifyWorker } from '../../src/notify/channel.js';
import { chatStandIn, type ChatRequest } from '../helpers/chat-stand-in.js';
import { mailbox, type Mailbox } from '../helpers/smtp-mailbox.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { parsedTargets, workerDeps } from './worker-rig.js';

const BASE = 'https://mirror.example.com';
const COWORKERS_URL = `${BASE}/coworkers/`;

/** Every kind of target: the chat services on one stand-in, each on its own path, and a real SMTP server. */
async function everyKindOfTarget() {
  const standIn = await chatStandIn(() => null);
  const box = await mailbox();
  const chats = {
    slack: `slack+${standIn.url}/slack/T0/B0/secret`,
    discord: `discord+${standIn.url}/discord/1/secret`,
    teams: `teams+${standIn.url}/teams/workflows/secret`,
    gchat: `gchat+${standIn.url}/gchat/spaces/secret`,
    mattermost: `mattermost+${standIn.url}/mattermost/hooks/secret`,
    // ntfy publishes to the server root, the topic in the body.
    ntfy: `ntfy+${standIn.url}/team-topic`,
  };
  const email = `smtp://user:p%2Cw@127.0.0.1:${box.port}/?from=mirror@example.com&to=hr@example.com`;
  const entries = [...Object.values(chats), email];
  const targets = parsedTargets(entries);
  /** The chat requests by service, in the order they came. */
  const byService = (): Record<string, ChatRequest[]> => {
    const out: Record<string, ChatRequest[]> = {};
    for (const request of standIn.requests) {
      const service = request.path === '/' ? 'ntfy' : (request.path.split('/')[1] ?? '');
      (out[service] ??= []).push(request);
    }
    return out;
  };
  return { box, byService, targets, env: { NOTIFY_URLS: entries.join(','), PUBLIC_BASE_URL: BASE } };
}

/** One worker pass after another until the outbox holds nothing pending, as `start` would. */
async function deliverAll(store: Store, targets: NotifyTarget[]): Promise<void> {
  const deps = workerDeps(store, targets);
  const worker = notifyWorker(deps);
  try {
    for (let pass = 0; pass < 5 && ((await deps.outbox.countPending?.()) ?? 0) > 0; pass++)
      await worker.poke();
  } finally {
    await worker.stop();
  }
}

const mailText = (box: Mailbox, i: number): string => {
  const mail = box.mails[i];
  return `${mail?.subject ?? ''}\n${mail?.text ?? ''}\n${typeof mail?.html === 'string' ? mail.html : ''}`;
};

describe.each(STORE_KINDS)('the first sync of an empty store is not news (%s)', (kind) => {
  const fresh = storeMaker(kind);

  it('tells each target once that the mirror now follows N coworkers, linked, never that they joined; the next run names who joined', async () => {
    const store = await fresh();
    const { box, byService, targets, env } = await everyKindOfTarget();
    const upstream = await simulatedUpstream({ seed: 41, count: 63 });

    const first = await sync(store, upstream, env);
    expect(first.counts.added).toBe(63);
    const coworkers = Number((await storeRows(store, 'select count(*) as n from coworkers'))[0]?.n);
    // This listing repeats some uuids: 63 entries of fewer coworkers, as the summary says.
    expect(coworkers).toBeLessThan(63);
    const rows = await storeRows(store, 'select type, run_id, body from webhook_messages order by id');
    expect(rows.map((r) => [r.type, r.run_id])).toEqual([['notify.changes', first.runId]]);
    const [finishedAt] = (
      await storeRows(store, `select finished_at from runs where id = ${first.runId}`)
    ).map((r) => String(r.finished_at));
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const clock = localClock(finishedAt ?? '', zone);
    expect(JSON.parse(String(rows[0]?.body)) as NotifyMessage).toEqual({
      event: 'changes',
      title: `Team page: the mirror now follows ${coworkers} coworkers`,
      summary:
        `The mirror's first sync, run ${first.runId} at ${clock}, found ${coworkers} coworkers on the team ` +
        'page (63 entries: some are listed more than once). From now on, messages say who joins, leaves, ' +
        'returns or changes.',
      lines: [],
      more: null,
      link: { label: 'Coworkers', url: COWORKERS_URL },
      footer: `Run ${first.runId} finished ${clock}. Times in ${zone}.`,
    });

    await deliverAll(store, targets);
    const services = byService();
    expect(Object.keys(services).sort()).toEqual([
      'discord',
      'gchat',
      'mattermost',
      'ntfy',
      'slack',
      'teams',
    ]);
    const told = `now follows ${coworkers} coworkers`;
    for (const [service, requests] of Object.entries(services)) {
      expect({ service, count: requests.length }).toEqual({ service, count: 1 });
      expect(requests[0]?.body).toContain(told);
      expect(requests[0]?.body).toContain(COWORKERS_URL);
      expect(requests[0]?.body).not.toMatch(/joined/i);
    }
    expect(box.mails).toHaveLength(1);
    expect(box.mails[0]?.subject).toBe(`Team page: the mirror now follows ${coworkers} coworkers`);
    expect(box.mails[0]?.text).toContain(`Coworkers: ${COWORKERS_URL}`);
    expect(mailText(box, 0)).not.toMatch(/joined/i);

    const joined = upstream.data.add(1);
    const name = joined.kind === 'add' ? String(joined.added[0]?.entry.name) : '';
    const second = await sync(store, upstream, env);
    expect(second.counts.added).toBe(1);
    await deliverAll(store, targets);
    for (const [service, requests] of Object.entries(byService())) {
      expect({ service, count: requests.length }).toEqual({ service, count: 2 });
      expect(requests[1]?.body).toContain('1 joined');
      expect(requests[1]?.body).toContain(JSON.stringify(name).slice(1, -1));
    }
    expect(box.mails).toHaveLength(2);
    expect(box.mails[1]?.subject).toBe('Team page: 1 joined');
    expect(box.mails[1]?.text).toContain(`• ${name} joined`);
  });
});
