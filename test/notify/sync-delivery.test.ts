import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { chatStandIn, type Contract } from '../helpers/chat-stand-in.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { webhookReceiver } from '../helpers/webhook-receiver.js';

beforeAll(() => ensureBuilt());

/** Slack's incoming webhook: a JSON body with 1 to 50 blocks, else 400 `invalid_blocks`. */
const slack: Contract = (r) => {
  const blocks = (r.json as { blocks?: unknown } | null)?.blocks;
  if (!r.contentType.startsWith('application/json')) return 'invalid_payload';
  return Array.isArray(blocks) && blocks.length > 0 && blocks.length <= 50 ? null : 'invalid_blocks';
};

/** The notification deliveries of the database file, by id. */
function deliveries(file: string): { status: string; attempts: number }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(
        `select d.status, d.attempts from webhook_deliveries d
           join webhook_endpoints e on e.id = d.endpoint_id where e.url like 'notify:%' order by d.id`,
      )
      .all() as { status: string; attempts: number }[];
  } finally {
    db.close();
  }
}

function makeDue(file: string): void {
  const db = new Database(file);
  try {
    db.prepare(`update webhook_deliveries set next_attempt_at = '2000-01-01T00:00:00.000Z'`).run();
  } finally {
    db.close();
  }
}

describe('a plain coworker-mirror sync delivers its notifications before it exits (issue 22)', () => {
  it("sends the run's message; a refusal is said on stderr, kept for the next sync, and leaves exit 0", async () => {
    const upstream = await simulatedUpstream({ seed: 11, count: 4 });
    const standIn = await chatStandIn(slack);
    const db = join(tempDir(), 'mirror.db');
    const env = {
      UPSTREAM_URL: upstream.url,
      DATABASE_PATH: db,
      NOTIFY_URLS: `slack+${standIn.url}/services/T0/B0/secret`,
      WEBHOOK_RETRY_SCHEDULE: '1h',
    };

    const first = runCli(['sync'], env);
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(standIn.requests).toHaveLength(1);
    // The first sync of an empty store: a count of the team as found, nobody "joined".
    expect(standIn.requests[0]?.body).toMatch(/the mirror now follows \d+ coworkers?/);
    expect(standIn.requests[0]?.body).not.toContain('joined');
    expect(deliveries(db)).toEqual([{ status: 'succeeded', attempts: 1 }]);

    standIn.answer(503, {}, 'service_unavailable');
    upstream.data.edit(1, 'post');
    const second = runCli(['sync'], env);
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(second.output()).toContain(
      `coworker-mirror: notification not delivered: slack ${standIn.url}/…: answered 503: service_unavailable`,
    );
    expect(second.output()).toContain(
      'coworker-mirror: 1 notification stays in the outbox for the next sync or start',
    );
    expect(second.output()).not.toContain('/services/T0/B0/secret');
    expect(deliveries(db)).toEqual([
      { status: 'succeeded', attempts: 1 },
      { status: 'pending', attempts: 1 },
    ]);

    // Once its retry is due, the next sync (nothing new upstream) sends it.
    standIn.answer(200, {}, 'ok');
    makeDue(db);
    const third = runCli(['sync'], env);
    expect(await third.exited).toEqual({ code: 0, signal: null });
    expect(third.output()).not.toContain('notification');
    expect(standIn.requests).toHaveLength(3);
    expect(deliveries(db)).toEqual([
      { status: 'succeeded', attempts: 1 },
      { status: 'succeeded', attempts: 2 },
    ]);
  });

  it('gives up at NOTIFY_SEND_TIMEOUT when the service never answers, and leaves the row pending', async () => {
    const upstream = await simulatedUpstream({ seed: 12, count: 3 });
    const receiver = await webhookReceiver(null);
    receiver.behave(() => ({ kind: 'hang' }));
    const db = join(tempDir(), 'mirror.db');
    const sync = runCli(['sync'], {
      UPSTREAM_URL: upstream.url,
      DATABASE_PATH: db,
      NOTIFY_URLS: `slack+${receiver.url}/services/T0/B0/secret`,
      NOTIFY_TIMEOUT: '1h',
      NOTIFY_SEND_TIMEOUT: '300ms',
      WEBHOOK_RETRY_SCHEDULE: '1h',
    });
    expect(await sync.exited).toEqual({ code: 0, signal: null });
    // The attempt's own deadline is cut to what is left of NOTIFY_SEND_TIMEOUT.
    expect(sync.output()).toMatch(/notification not delivered: slack .+: no answer within \d+ ms/);
    expect(sync.output()).toContain('1 notification stays in the outbox for the next sync or start');
    expect(deliveries(db)).toEqual([{ status: 'pending', attempts: 1 }]);
  });
});
