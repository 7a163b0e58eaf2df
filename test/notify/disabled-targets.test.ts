import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { PortNotificationOutbox } from '../../src/db/notify-outbox.js';
import { outboxPortOf } from '../../src/db/sqlite/sql-port.js';
import { buildServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { sendMessage } from '../../src/notify/send.js';
import { keyedTargets, parseTarget, type NotifyTarget } from '../../src/notify/targets.js';
import { outboxOver } from '../../src/notify/outbox.js';
import { notifyWorker } from '../../src/notify/channel.js';
import { chatStandIn } from '../helpers/chat-stand-in.js';
import { defaultServerConfig } from '../helpers/mirror-server.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt());

function target(entry: string): NotifyTarget {
  const parsed = parseTarget(entry);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

/** A database whose Slack target answered 404 (a deleted webhook): disabled, one message pending. */
async function disabledSlack() {
  const standIn = await chatStandIn(() => null);
  standIn.answer(404, {}, 'no_service');
  const entry = `slack+${standIn.url}/services/T0/B0/secret-token`;
  const file = join(tempDir(), 'mirror.db');
  const store = openDatabase(file);
  onTestFinished(() => store.close());
  const [slack] = keyedTargets([target(entry)], store.endpointKeys);
  if (slack === undefined) throw new Error('no target');
  const upstream = await simulatedUpstream({ seed: 21, count: 3 });
  await sync(store, upstream, { NOTIFY_URLS: entry });
  const worker = notifyWorker({
    outbox: outboxOver(new PortNotificationOutbox(outboxPortOf(store.sqlite))),
    targets: [slack],
    send: sendMessage,
    timeoutMs: 5000,
    sleep: () => Promise.resolve(),
    logger: silentLogger(),
    pollMs: 60_000,
  });
  await worker.poke();
  await worker.stop();
  upstream.data.edit(1, 'post');
  await sync(store, upstream, { NOTIFY_URLS: entry });
  return { standIn, entry, slack, file, store };
}

describe('a target a service refused for good is shown with the command that enables it (issue 22)', () => {
  it('the status page names it by its masked URL, the reason and the command; never the URL', async () => {
    const { slack, store } = await disabledSlack();
    const server = await buildServer({
      store,
      logger: silentLogger(),
      config: { server: defaultServerConfig, notify: { urls: [slack] } },
    });
    onTestFinished(() => server.close());
    const url = await server.listen(0, '127.0.0.1');
    const html = await (await fetch(`${url}/`)).text();
    const text = html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
    expect(text).toContain('1 target disabled');
    expect(text).toContain(`${slack.label} since`);
    expect(text).toContain(': answered 404: no_service');
    expect(text).toContain(`coworker-mirror notify enable ${slack.id}`);
    expect(html).not.toContain('secret-token');
  });

  it('deliveries lists it; notify enable brings it back and its pending message goes out', async () => {
    const { standIn, entry, slack, file, store } = await disabledSlack();
    store.close();
    const env = { DATABASE_PATH: file, NOTIFY_URLS: entry };

    const list = runCli(['deliveries'], env);
    expect(await list.exited).toEqual({ code: 0, signal: null });
    expect(list.output()).toMatch(
      new RegExp(
        `^notification target slack ${standIn.url}/… \\(id ${slack.id}\\) disabled since \\S+: ` +
          `answered 404: no_service; enable it again: coworker-mirror notify enable ${slack.id}$`,
        'm',
      ),
    );
    expect(list.output()).not.toContain('secret-token');

    const unknown = runCli(['notify', 'enable', 'feedfacefeedfacefeedface'], env);
    expect(await unknown.exited).toEqual({ code: 7, signal: null });
    expect(unknown.output()).toContain('no disabled notification target feedfacefeedfacefeedface in');

    const enable = runCli(['notify', 'enable', 'all'], env);
    expect(await enable.exited).toEqual({ code: 0, signal: null });
    expect(enable.output().trim()).toBe(
      `notification target ${slack.id} slack ${standIn.url}/… enabled; ` +
        'its pending messages go out at the next sync or start',
    );
    const again = runCli(['notify', 'enable', 'all'], env);
    expect(await again.exited).toEqual({ code: 0, signal: null });
    expect(again.output()).toContain('no notification target is disabled');

    // The message of the run after the refusal waited; the next sync sends it.
    standIn.answer(200, {}, 'ok');
    const requestsBefore = standIn.requests.length;
    const upstream = await simulatedUpstream({ seed: 21, count: 3 });
    const next = runCli(['sync', '--rebind'], { ...env, UPSTREAM_URL: upstream.url });
    expect(await next.exited).toEqual({ code: 0, signal: null });
    // The waiting message, then this run's own (the fresh upstream has the post as it was).
    const sent = standIn.requests.slice(requestsBefore);
    expect(sent).toHaveLength(2);
    for (const request of sent) expect(request.body).toContain('1 changed');
  });
});
