import { describe, expect, it } from 'vitest';
import { changesMessage } from '../../src/notify/message.js';
import { sendMessage } from '../../src/notify/send.js';
import { parseTarget, type EmailTarget } from '../../src/notify/targets.js';
import { mailbox } from '../helpers/smtp-mailbox.js';

function target(port: number): EmailTarget {
  const parsed = parseTarget(
    `smtp://user:p%2Cw@127.0.0.1:${port}/?from=mirror@example.com&to=hr@example.com,web@example.com`,
  );
  if (typeof parsed === 'string' || parsed.kind !== 'email') throw new Error('expected an e-mail target');
  return parsed;
}

const HOSTILE = '<script>alert(1)</script> <img src=x onerror=alert(2)> "Zoë" & \u202Eevil\u202C';

const message = changesMessage(
  {
    runId: 7,
    finishedAt: '2026-11-24T08:10:00Z',
    changes: [
      { kind: 'added', field: null, old: null, new: null, uuid: 'u1', slot: 0, name: HOSTILE, post: 'QA' },
      { kind: 'removed', field: null, old: null, new: null, uuid: 'u2', slot: 0, name: 'Kate', post: '' },
    ],
  },
  { baseUrl: 'https://mirror.example.com', timeZone: 'Europe/Paris' },
);

describe('e-mail through nodemailer to a real SMTP server (issue 22)', () => {
  it('arrives as one mail with a text and an escaped HTML part, names linked, times in TZ', async () => {
    const box = await mailbox();
    const outcome = await sendMessage(message, target(box.port), { timeoutMs: 5000 });
    expect(outcome).toMatchObject({ status: 'ok', httpStatus: null });
    expect(box.envelopes).toEqual([
      { from: 'mirror@example.com', to: ['hr@example.com', 'web@example.com'], user: 'user' },
    ]);
    const mail = box.mails[0];
    expect(mail?.subject).toBe('Team page: 1 joined, 1 left');
    expect(mail?.text).toBe(
      [
        `• \u2068${HOSTILE}\u2069 joined as QA <https://mirror.example.com/coworkers/u1/>`,
        '• Kate left <https://mirror.example.com/coworkers/u2/>',
        'Run 7: https://mirror.example.com/runs/7/',
        'Run 7 finished 2026-11-24 09:10. Times in Europe/Paris.',
      ].join('\n'),
    );
    const html = typeof mail?.html === 'string' ? mail.html : '';
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain(
      '<bdi><a href="https://mirror.example.com/coworkers/u1/">\u2068&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt; &quot;Zoë&quot; &amp; \u202Eevil\u202C\u2069</a></bdi> joined as QA',
    );
  });

  it('a 5xx of the server fails this mail without retrying; a closed port is retried', async () => {
    const box = await mailbox({ refuseWith: 550 });
    const refused = await sendMessage(message, target(box.port), { timeoutMs: 5000 });
    expect(refused.status).toBe('failed');
    expect(refused.detail).toMatch(/^answered 550/);
    const closed = await sendMessage(message, { ...target(1), port: 1 }, { timeoutMs: 5000 });
    expect(closed.status).toBe('retry');
    expect(closed.detail).not.toContain('p,w');
  });
});
