import { describe, expect, it } from 'vitest';
import { Command, Option } from 'commander';
import { registerDeliveriesCommand } from '../../src/cli/deliveries-command.js';
import { loadConfig } from '../../src/config/load-config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { tempDatabase } from '../helpers/temp-db.js';
import { webhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverySettings, deliveryWorker } from '../helpers/webhook-runs.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { commitRunWithChange } from '../helpers/store-runs.js';
import type { Store } from '../../src/db/store.js';

const webhookIds = async (store: Store) =>
  (await storeRows(store, 'select webhook_id from webhook_messages order by id')).map((r) => r.webhook_id);

/** The program as cli.ts builds it, reduced to the `deliveries` command and its --db flag. */
function program(): Command {
  const root = new Command('coworker-mirror').exitOverride();
  registerDeliveriesCommand(root, {
    withSettings: (command) => command.addOption(new Option('--db <value>')),
    configFrom: (options) => Promise.resolve(loadConfig({}, { 'database.path': options.db as string })),
  });
  return root;
}

const TOKEN = 'an-admin-token-of-some-length';

async function scenario<S extends Store>(store: S) {
  const ok = await webhookReceiver(null);
  const gone = await webhookReceiver(null);
  gone.behave(() => ({ kind: 'status', status: 410, body: 'no such hook' }));
  await commitRunWithChange(store, [ok.url, gone.url]);
  await commitRunWithChange(store, [ok.url, gone.url]);
  await deliveryWorker(store, deliverySettings([ok.url, gone.url])).drain(5_000);
  const mirror = await startMirror(store, { adminToken: TOKEN });
  const call = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${mirror.url}${path}`, init);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { store, ok, gone, mirror, call };
}

describe.each(STORE_KINDS)('the delivery log over HTTP on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('lists deliveries newest first, filtered by status and endpoint, with next links that keep the filter', async () => {
    const { call, store, mirror } = await scenario(await fresh());
    const all = await call('/api/mirror/deliveries/');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ count: 4, next: null, previous: null });
    expect((all.body.results as { id: number }[]).map((d) => d.id)).toEqual([4, 3, 2, 1]);

    const pending = await call('/api/mirror/deliveries/?status=pending&page_size=1');
    expect(pending.body).toMatchObject({
      count: 2,
      next: `${mirror.url}/api/mirror/deliveries/?status=pending&page=2&page_size=1`,
      results: [
        {
          id: 4,
          webhook_id: (await webhookIds(store))[1],
          type: 'coworkers.changed',
          run: 2,
          endpoint: { id: 2, disabled: true, disabled_reason: 'answered 410 Gone' },
          status: 'pending',
          attempts: 0,
          last_attempt: null,
        },
      ],
    });
    const toFirst = await call('/api/mirror/deliveries/?endpoint=1');
    expect(toFirst.body).toMatchObject({ count: 2 });
    expect((toFirst.body.results as { status: string }[]).map((d) => d.status)).toEqual([
      'succeeded',
      'succeeded',
    ]);

    expect((await call('/api/mirror/deliveries/?status=lost')).status).toBe(400);
  });

  it('shows one delivery with its attempt log', async () => {
    const { call } = await scenario(await fresh());
    const one = await call('/api/mirror/deliveries/2/');
    expect(one.body).toMatchObject({
      id: 2,
      status: 'pending',
      attempt_log: [{ http_status: 410, ok: false, response_excerpt: 'no such hook' }],
    });
    expect((await call('/api/mirror/deliveries/99/')).status).toBe(404);
  });

  it('redeliver needs the admin token, then queues the delivery again and re-enables its endpoint', async () => {
    const { call, store } = await scenario(await fresh());
    const post = (token?: string) =>
      call('/api/mirror/deliveries/2/redeliver', {
        method: 'POST',
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
      });
    expect((await post()).status).toBe(401);
    expect((await post('wrong-token-wrong-token')).status).toBe(403);
    const queued = await post(TOKEN);
    expect(queued).toEqual({
      status: 202,
      body: { detail: 'Redelivery queued.', delivery: 2, url: '/api/mirror/deliveries/2/' },
    });
    expect(await storeRows(store, 'select disabled_at from webhook_endpoints where id = 2')).toEqual([
      { disabled_at: null },
    ]);
    const missing = await call('/api/mirror/deliveries/99/redeliver', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(missing.status).toBe(404);
  });

  it('/metrics counts deliveries by status and disabled endpoints', async () => {
    const { mirror } = await scenario(await fresh());
    const text = await (await fetch(`${mirror.url}/metrics`)).text();
    expect(text).toContain('coworker_mirror_webhook_deliveries{status="pending"} 2');
    expect(text).toContain('coworker_mirror_webhook_deliveries{status="succeeded"} 2');
    expect(text).toContain('coworker_mirror_webhook_deliveries{status="failed"} 0');
    expect(text).toContain('coworker_mirror_webhook_endpoints_disabled 1');
  });
});

// The CLI opens the database by --db: a SQLite file here (the PostgreSQL CLI is covered by the CLI's own tests).
describe('the delivery log from the CLI', () => {
  it('`coworker-mirror deliveries` lists, shows, redelivers and re-enables', async () => {
    const { store } = await scenario(tempDatabase());
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    const run = async (...args: string[]) => {
      lines.length = 0;
      process.stdout.write = (chunk: string) => (lines.push(chunk.trimEnd()), true);
      try {
        await program().parseAsync(['node', 'coworker-mirror', 'deliveries', ...args, '--db', store.file]);
      } finally {
        process.stdout.write = write;
      }
      return lines.join('\n');
    };
    const listed = await run('--status', 'pending');
    const [header, row, ...rest] = listed.split('\n');
    expect(rest).toHaveLength(1);
    expect(header).toMatch(
      /^DELIVERY +STATUS +TYPE +RUN +WEBHOOK-ID +ENDPOINT +TRIES +LAST TRY +ANSWER +NEXT TRY$/,
    );
    expect(row).toMatch(
      // WEBHOOK_URLS is not set here: the endpoint is named by the key the database holds, never its URL.
      /^ {7}4 +pending +coworkers\.changed +2 +msg_\S+ +2 webhook:[0-9a-f]{64} \(disabled\) +0\b/,
    );
    const shown = (await run('show', '2')).split('\n');
    expect(shown[0]).toMatch(/^DELIVERY +STATUS/);
    expect(shown[3]).toMatch(/^ATTEMPT +AT +ANSWER +TOOK/);
    // Local time (TZ) without milliseconds or a Z, as `runs` prints it.
    expect(shown[4]).toMatch(/^ {6}1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +\S+ +\d+ ms/);
    const json = JSON.parse(await run('show', '2', '--json')) as { attempt_log: unknown[] };
    expect(json.attempt_log).toHaveLength(1);
    expect(await run('enable', '2')).toBe('endpoint 2 enabled; its pending deliveries resume in order');
    expect(await run('redeliver', '1')).toMatch(/^delivery 1 queued again/);
    expect(store.sqlite.prepare('select status from webhook_deliveries where id = 1').pluck().get()).toBe(
      'pending',
    );
  });
});
