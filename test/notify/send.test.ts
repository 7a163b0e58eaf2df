import { describe, expect, it } from 'vitest';
import type { ChangeFacts } from '../../src/notify/describe-change.js';
import {
  changesMessage,
  failureMessage,
  recoveryMessage,
  sampleMessage,
  type NotifyMessage,
} from '../../src/notify/message.js';
import { sendMessage } from '../../src/notify/send.js';
import { parseTarget, type ChatTarget } from '../../src/notify/targets.js';
import { chatStandIn, type ChatRequest, type Contract } from '../helpers/chat-stand-in.js';

const HOSTILE =
  '@everyone @here <!channel> <@U123> <script>alert(1)</script> **b** [x](http://evil.example) \u202Eevil\u202C & co';
const ctx = { baseUrl: 'https://mirror.example.com', timeZone: 'Europe/Paris' };

function person(uuid: string, name: string, extra: Partial<ChangeFacts> = {}): ChangeFacts {
  return {
    kind: 'added',
    field: null,
    old: null,
    new: null,
    uuid,
    slot: 0,
    name,
    post: 'QA engineer',
    ...extra,
  };
}

/** A run with hostile names, a 1 MB name and post, and more people than a message lists. */
function hostileMessage(): NotifyMessage {
  const changes = [
    person('h1', HOSTILE),
    person('h2', 'x'.repeat(1024 * 1024), { post: '<!here>'.repeat(150_000) }),
    person('h3', 'José Álvarez', {
      kind: 'changed',
      field: 'post',
      old: HOSTILE,
      new: '`code` ~~s~~ > quote',
    }),
    ...Array.from({ length: 40 }, (_, i) => person(`p${i}`, `Person ${i}`, { kind: 'removed' })),
  ];
  return changesMessage({ runId: 42, finishedAt: '2026-11-24T08:10:00Z', changes }, ctx);
}

const obj = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const isJson = (r: ChatRequest) => r.contentType.startsWith('application/json') && r.json !== null;

/** Slack's documented limits (Block Kit) and, for the test, no control sequence but our own links. */
const slack: Contract = (r) => {
  if (!isJson(r)) return 'invalid_payload';
  const blocks = arr(obj(r.json).blocks);
  if (blocks.length === 0 || blocks.length > 50) return 'invalid_blocks';
  for (const block of blocks.map(obj)) {
    const text = obj(block.text);
    const limit = block.type === 'header' ? 150 : 3000;
    if (str(text.text).length > limit) return 'invalid_blocks: text too long';
    const mrkdwn = [text, ...arr(block.elements).map(obj)]
      .filter((t) => t.type === 'mrkdwn')
      .map((t) => str(t.text));
    if (mrkdwn.some((t) => /<(?!https?:\/\/)/.test(t))) return 'a control sequence from data';
  }
  return null;
};

const discord: Contract = (r) => {
  if (!isJson(r)) return 'Cannot send an empty message';
  const body = obj(r.json);
  if (JSON.stringify(obj(body.allowed_mentions).parse) !== '[]') return 'mentions would be parsed';
  const embeds = arr(body.embeds).map(obj);
  if (embeds.length === 0 || embeds.length > 10) return 'embeds: 1 to 10';
  const embed = embeds[0] ?? {};
  const title = str(embed.title);
  const description = str(embed.description);
  const footer = str(obj(embed.footer).text);
  if (title.length > 256 || description.length > 4096 || footer.length > 2048) return 'embed field too long';
  if (title.length + description.length + footer.length > 6000) return 'embed over 6000 characters';
  return null;
};

const teams: Contract = (r) => {
  if (!isJson(r) || Buffer.byteLength(r.body) > 28 * 1024) return 'payload over 28 KB';
  const body = obj(r.json);
  const attachment = obj(arr(body.attachments)[0]);
  const card = obj(attachment.content);
  if (body.type !== 'message' || attachment.contentType !== 'application/vnd.microsoft.card.adaptive')
    return 'not an Adaptive Card message';
  if (card.type !== 'AdaptiveCard' || typeof card.version !== 'string') return 'not an AdaptiveCard';
  // A ColumnSet holds Columns, whose items are the elements; an Image needs an http(s) url.
  const blocks = arr(card.body)
    .map(obj)
    .flatMap((b) =>
      b.type === 'ColumnSet'
        ? arr(b.columns)
            .map(obj)
            .flatMap((c) => (c.type === 'Column' ? arr(c.items).map(obj) : [c]))
        : [b],
    );
  const runs = blocks.flatMap((b) => arr(b.inlines).map(obj));
  const image = (b: Record<string, unknown>) => b.type === 'Image' && /^https?:\/\//.test(str(b.url));
  if (blocks.some((b) => b.type !== 'RichTextBlock' && !image(b)) || runs.some((i) => i.type !== 'TextRun'))
    return 'unexpected element';
  return null;
};

const gchat: Contract = (r) => {
  const text = str(obj(r.json).text);
  if (!isJson(r) || text === '' || text.length > 4096) return 'text: 1 to 4096 characters';
  if (/<(?!https?:\/\/)/.test(text)) return 'a control sequence from data';
  return null;
};

const mattermost: Contract = (r) => {
  const text = str(obj(r.json).text);
  if (!isJson(r) || text === '' || text.length > 16_383) return 'text: 1 to 16383 characters';
  if (/@(everyone|here|channel|all)\b/.test(text)) return 'a mention from data';
  return null;
};

const ntfy: Contract = (r) => {
  const body = obj(r.json);
  if (!isJson(r) || r.path !== '/') return 'JSON publishing posts to the server root';
  if (!/^[-_A-Za-z0-9]{1,64}$/.test(str(body.topic))) return 'invalid topic';
  if (Buffer.byteLength(str(body.message)) > 4096) return 'message over 4096 bytes';
  return null;
};

const services: [ChatTarget['kind'], Contract, string][] = [
  ['slack', slack, '/services/T0/B0/secret'],
  ['discord', discord, '/api/webhooks/1/secret'],
  ['teams', teams, '/workflows/abc/triggers/manual/paths/invoke?sig=secret'],
  ['gchat', gchat, '/v1/spaces/AAA/messages?key=k&token=secret'],
  ['mattermost', mattermost, '/hooks/secret'],
  ['ntfy', ntfy, '/team-page-secret'],
];

async function targetAt(kind: ChatTarget['kind'], contract: Contract, path: string) {
  const standIn = await chatStandIn(contract);
  const target = parseTarget(`${kind}+${standIn.url}${path}`);
  if (typeof target === 'string') throw new Error(target);
  if (target.kind === 'email') throw new Error('expected a chat target');
  return { standIn, target };
}

describe('each service takes the message as its documentation says (issue 22)', () => {
  it.each(services)(
    '%s: hostile names and 1 MB posts stay within the contract',
    async (kind, contract, path) => {
      const { standIn, target } = await targetAt(kind, contract, path);
      const outcome = await sendMessage(hostileMessage(), target, { timeoutMs: 5000 });
      expect(outcome, standIn.requests[0]?.body.slice(0, 300)).toMatchObject({
        status: 'ok',
        httpStatus: 200,
      });
      expect(standIn.requests).toHaveLength(1);
      const body = standIn.requests[0]?.body ?? '';
      expect(body).toContain('José Álvarez');
    },
  );

  it.each(services)(
    '%s: failures, recoveries and the sample, with and without links, as well',
    async (kind, contract, path) => {
      const { standIn, target } = await targetAt(kind, contract, path);
      const failure = {
        failedRuns: 3,
        since: '2026-11-24T08:10:00Z',
        reason: `upstream answered 503: ${HOSTILE}`,
        servingSince: null,
      };
      const messages = [
        failureMessage(failure, ctx),
        failureMessage(failure, { ...ctx, baseUrl: null }),
        recoveryMessage({ at: '2026-11-24T09:00:00Z', failedRuns: 1 }, ctx),
        sampleMessage(new Date('2026-11-24T09:00:00Z'), { ...ctx, baseUrl: null }),
      ];
      for (const message of messages) {
        const outcome = await sendMessage(message, target, { timeoutMs: 5000 });
        expect(outcome, standIn.requests.at(-1)?.body.slice(0, 300)).toMatchObject({ status: 'ok' });
      }
    },
  );

  it('Slack: names link to their page, data escaped, 20 sentences then "and 23 more"', async () => {
    const { standIn, target } = await targetAt('slack', slack, '/s');
    await sendMessage(hostileMessage(), target, { timeoutMs: 5000 });
    const blocks = arr(obj(standIn.requests[0]?.json).blocks).map(obj);
    expect(obj(blocks[0]?.text).text).toBe('Team page: 2 joined, 40 left, 1 changed');
    expect(str(obj(blocks[1]?.text).text)).toBe(
      '• <https://mirror.example.com/coworkers/h1/|\u2068@everyone @here &lt;!channel&gt; &lt;@U123&gt; &lt;script&gt;alert(1)&lt;/script&gt; **b** [x](http://evil.example) \u202Eevil\u202C &amp; co\u2069> joined as QA engineer',
    );
    const texts = blocks.map((b) => str(obj(b.text).text));
    expect(texts).toContain('and 23 more (<https://mirror.example.com/runs/42/|all of them>)');
  });

  it('Discord: mentions and markdown escaped, no mention parsed, the run linked', async () => {
    const { standIn, target } = await targetAt('discord', discord, '/d');
    await sendMessage(hostileMessage(), target, { timeoutMs: 5000 });
    const embed = obj(arr(obj(standIn.requests[0]?.json).embeds)[0]);
    const first = str(embed.description).split('\n')[0] ?? '';
    expect(first).toBe(
      '• [\u2068@\u200beveryone @\u200bhere \\<!channel\\> \\<@\u200bU123\\> \\<script\\>alert\\(1\\)\\</script\\> \\*\\*b\\*\\* \\[x\\]\\(http\\://evil.example\\) \u202Eevil\u202C & co\u2069](https://mirror.example.com/coworkers/h1/) joined as QA engineer',
    );
    expect(embed.url).toBe('https://mirror.example.com/runs/42/');
  });

  it('Teams: sentences are TextRuns, so data never renders as Markdown', async () => {
    const { standIn, target } = await targetAt('teams', teams, '/t');
    await sendMessage(hostileMessage(), target, { timeoutMs: 5000 });
    const card = obj(obj(arr(obj(standIn.requests[0]?.json).attachments)[0]).content);
    const second = arr(obj(arr(card.body)[1]).inlines).map(obj);
    // The name holds an override (balanced): it is isolated, FSI…PDI, as every right-to-left text is.
    expect(second.map((i) => i.text)).toEqual(['• ', `\u2068${HOSTILE}\u2069`, ' joined as QA engineer']);
    expect(obj(second[1]?.selectAction).url).toBe('https://mirror.example.com/coworkers/h1/');
  });
});

describe('what a service answered becomes an outcome', () => {
  it.each([
    [200, {}, { status: 'ok', retryAfterMs: null }],
    [204, {}, { status: 'ok', retryAfterMs: null }],
    [429, { 'retry-after': '7' }, { status: 'retry', retryAfterMs: 7000 }],
    [503, {}, { status: 'retry', retryAfterMs: null }],
    [500, { 'retry-after': '1.5' }, { status: 'retry', retryAfterMs: 1500 }],
    [404, {}, { status: 'refused', retryAfterMs: null }],
    [410, {}, { status: 'refused', retryAfterMs: null }],
    [403, {}, { status: 'refused', retryAfterMs: null }],
    [400, {}, { status: 'failed', retryAfterMs: null }],
    [302, { location: 'https://elsewhere.example/' }, { status: 'failed', retryAfterMs: null }],
  ] as const)('%i %o → %o', async (status, headers, expected) => {
    const { standIn, target } = await targetAt('slack', () => null, '/services/T0/B0/SECRET');
    standIn.answer(status, headers, 'no_service');
    const outcome = await sendMessage(hostileMessage(), target, { timeoutMs: 5000 });
    expect(outcome).toMatchObject({ ...expected, httpStatus: status });
    expect(outcome.detail).toBe(status === 204 ? 'answered 204' : `answered ${status}: no_service`);
  });

  it('a closed port is a network error to retry, told without the URL', async () => {
    const { standIn, target } = await targetAt('discord', () => null, '/api/webhooks/1/SECRET');
    const closed = { ...target, url: target.url.replace(/:\d+/, ':1') };
    const outcome = await sendMessage(hostileMessage(), closed, { timeoutMs: 5000 });
    expect(outcome).toMatchObject({ status: 'retry', httpStatus: null, detail: 'connection refused' });
    expect(standIn.requests).toHaveLength(0);
  });
});
