import { describe, expect, it } from 'vitest';
import type { ChangeFacts } from '../../src/notify/describe-change.js';
import { emailContent } from '../../src/notify/formats/email-format.js';
import { fit } from '../../src/notify/formats/chat-formats.js';
import { changesMessage, failureMessage, type NotifyMessage } from '../../src/notify/message.js';
import { chatPayload } from '../../src/notify/send.js';
import { parseTarget, type ChatTarget } from '../../src/notify/targets.js';
import { bidiLeaks, htmlAsBidiText, htmlAttributeTexts, stringsOf } from '../helpers/bidi.js';

// Regression: a name holding U+202E (RIGHT-TO-LEFT OVERRIDE) turned the rest of a chat message's
// line around (Teams' Adaptive Cards renderer showed `(elpmaxe.live//:ptth)[knil]`): a name could
// make a message say what it does not. Every piece of upstream text in a message is now isolated,
// its controls balanced inside, so none reaches the words after it, in every format.

/** Overrides and isolates left open, and a stray end before them to close the field's isolate early. */
const NAME = 'Ann \u2069\u202eevil\u2066';
const POST = 'QA \u202elead\u2066';
const FIELD = 'nick\u202ename';

const person = { uuid: 'a'.repeat(32), slot: 0, name: NAME, post: POST };
const CHANGES: ChangeFacts[] = [
  { ...person, kind: 'added', field: null, old: null, new: null },
  { ...person, slot: 1, kind: 'changed', field: FIELD, old: '\u2066old', new: '\u202enew\u2069' },
  { ...person, kind: 'changed', field: 'post', old: 'qa', new: POST },
  {
    ...person,
    kind: 'media_changed',
    field: 'images',
    old: { url: 'https://m.example.com/p\u202egnp.png', sha256: 'aa' },
    new: { url: 'https://m.example.com/p\u202egnp.png', sha256: 'bb' },
  },
  { ...person, kind: 'removed', field: null, old: null, new: null },
];

const ctx = { baseUrl: 'https://mirror.example.com', timeZone: 'UTC' };
const changes = changesMessage({ runId: 7, finishedAt: '2026-11-24T08:10:00Z', changes: CHANGES }, ctx);
/** The failure message of a streak that stopped on a field of the upstream's. */
const failureOf = (field: string): NotifyMessage =>
  failureMessage(
    {
      failedRuns: 3,
      since: '2026-11-24T08:00:00Z',
      reason: `entry 3: name: expected a string, got "${field}"`,
      servingSince: '2026-11-24T07:00:00Z',
    },
    ctx,
  );
const failure = failureOf(NAME);

/** The mirror's own words in those messages, which no field may turn around. */
const OURS = [
  'joined',
  'left',
  ' → ',
  'bytes at the same address',
  '(appearance 2)',
  'Run 7',
  'Times in',
  'It keeps serving',
  'and ',
];

const target = (url: string): ChatTarget => {
  const parsed = parseTarget(url);
  if (typeof parsed === 'string' || parsed.kind === 'email') throw new Error(`not a chat target: ${url}`);
  return parsed;
};

const SERVICES: [string, ChatTarget][] = [
  ['Slack', target('slack+https://hooks.slack.com/services/T0/B0/x')],
  ['Google Chat', target('gchat+https://chat.googleapis.com/v1/spaces/x/messages')],
  ['Discord', target('discord+https://discord.com/api/webhooks/1/x')],
  ['Mattermost', target('mattermost+https://mm.example.com/hooks/x')],
  ['Teams', target('teams+https://example.webhook.office.com/x')],
  ['ntfy', target('ntfy+https://ntfy.sh/topic')],
];

const MESSAGES: [string, NotifyMessage][] = [
  ['changes', changes],
  ['failure', failure],
];

describe.each(MESSAGES)(
  'a %s message with U+202E and U+2066 in names, posts, fields and values',
  (_m, message) => {
    it.each(SERVICES)('%s: no field leaves a control open over the words after it', (_s, service) => {
      const payload = JSON.parse(chatPayload(message, service).body) as unknown;
      const texts = stringsOf(payload);
      expect(texts.join('\n')).toContain('\u202e');
      for (const text of texts) expect(bidiLeaks(text, OURS), text).toEqual([]);
    });

    it('e-mail: the subject holds no control; the text part and the HTML part (with its <bdi>) leave none open', () => {
      const mail = emailContent(message);
      expect(mail.subject).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
      expect(bidiLeaks(mail.text, OURS)).toEqual([]);
      expect(bidiLeaks(htmlAsBidiText(mail.html), OURS)).toEqual([]);
      for (const text of htmlAttributeTexts(mail.html)) expect(bidiLeaks(text, [])).toEqual([]);
    });
  },
);

describe('fit', () => {
  it('cuts inside an isolated field and closes what the cut left open, within the limit', () => {
    const text = `• \u2068Ann \u202eevil\u202c\u2069 joined`;
    const cut = fit(text, 10);
    expect(cut.length).toBeLessThanOrEqual(10);
    expect(cut.endsWith('…')).toBe(true);
    expect(bidiLeaks(cut, ['…'])).toEqual([]);
  });
});

describe('ntfy’s byte limit', () => {
  it('cuts a long failure inside its isolated reason and closes what the cut left open, within 4000 bytes', () => {
    const long = failureOf(`מרים \u202e${'ש'.repeat(3000)}`);
    const payload = JSON.parse(chatPayload(long, target('ntfy+https://ntfy.sh/topic')).body) as {
      message: string;
    };
    expect(Buffer.byteLength(long.summary ?? '')).toBeGreaterThan(4000);
    expect(Buffer.byteLength(payload.message)).toBeLessThanOrEqual(4000);
    expect(payload.message).toContain('\u202e');
    expect(bidiLeaks(payload.message, [])).toEqual([]);
  });
});
