import { describe, expect, it } from 'vitest';
import { digestMessage, nextDigestAt } from '../../src/notify/digest.js';
import type { ChangeFacts } from '../../src/notify/describe-change.js';

const facts = (uuid: string, kind: ChangeFacts['kind'], name: string): ChangeFacts => ({
  kind,
  field: null,
  old: null,
  new: null,
  uuid,
  slot: 0,
  name,
  post: '',
});

describe('NOTIFY_DIGEST: when a digest goes out, in TZ (issue 22)', () => {
  it.each([
    ['run', '2026-11-24T08:10:00Z', 'UTC', null],
    ['hour', '2026-11-24T08:10:00Z', 'UTC', '2026-11-24T09:00:00.000Z'],
    // Kolkata is UTC+05:30: its full hours fall at :30 UTC.
    ['hour', '2026-11-24T08:10:00Z', 'Asia/Kolkata', '2026-11-24T08:30:00.000Z'],
    ['day@09:00', '2026-11-24T07:59:00Z', 'Europe/Paris', '2026-11-24T08:00:00.000Z'],
    ['day@09:00', '2026-11-24T08:00:00Z', 'Europe/Paris', '2026-11-25T08:00:00.000Z'],
    // The night summer time ends in Paris (2026-10-25, 03:00 → 02:00): 09:00 is UTC+1 again.
    ['day@09:00', '2026-10-24T08:30:00Z', 'Europe/Paris', '2026-10-25T08:00:00.000Z'],
    ['day@09:00', '2026-11-24T23:30:00Z', 'America/New_York', '2026-11-25T14:00:00.000Z'],
  ] as const)('%s after %s in %s → %s', (every, after, zone, expected) => {
    const digest =
      every === 'run'
        ? { every }
        : every === 'hour'
          ? { every }
          : { every: 'day' as const, at: every.slice(4) };
    expect(nextDigestAt(new Date(after), digest, zone)?.toISOString() ?? null).toBe(expected);
  });

  it('one message for every run of the period, titled with it, linked to its timeline', () => {
    const message = digestMessage(
      [
        { runId: 4, finishedAt: '2026-11-24T08:10:00Z', changes: [facts('a', 'added', 'Zoë')] },
        { runId: 5, finishedAt: '2026-11-24T12:10:00Z', changes: [] },
        { runId: 6, finishedAt: '2026-11-24T16:10:00Z', changes: [facts('b', 'removed', 'Kate')] },
      ],
      { from: '2026-11-24T08:00:00Z', to: '2026-11-25T08:00:00Z' },
      { baseUrl: 'https://mirror.example.com', timeZone: 'Europe/Paris' },
    );
    expect(message).toMatchObject({
      title: 'Team page since 2026-11-24 09:00: 1 joined, 1 left',
      link: {
        label: 'Every change of the period',
        url: 'https://mirror.example.com/changes/?since=2026-11-24T08%3A00%3A00Z',
      },
      footer: '3 runs up to 2026-11-25 09:00. Times in Europe/Paris.',
    });
    expect(message?.lines.map((l) => `${l.who}${l.rest}`)).toEqual(['Zoë joined', 'Kate left']);
    expect(
      digestMessage(
        [],
        { from: '2026-11-24T08:00:00Z', to: '2026-11-25T08:00:00Z' },
        { baseUrl: null, timeZone: 'UTC' },
      ),
    ).toBeNull();
  });

  it("a first listing in the period is its count, then the other runs' changes by name", () => {
    const period = { from: '2026-11-24T08:00:00Z', to: '2026-11-25T08:00:00Z' };
    const ctx = { baseUrl: 'https://mirror.example.com', timeZone: 'Europe/Paris' };
    const first = { runId: 3, finishedAt: '2026-11-24T08:05:00Z', coworkers: 63, entries: 63 };
    const later = [{ runId: 4, finishedAt: '2026-11-24T08:10:00Z', changes: [facts('a', 'added', 'Zoë')] }];
    expect(digestMessage(later, period, ctx, first)).toEqual({
      event: 'changes',
      title: 'Team page since 2026-11-24 09:00: the mirror now follows 63 coworkers; then 1 joined',
      summary:
        "The mirror's first sync, run 3 at 2026-11-24 09:05, found 63 coworkers on the team page. What " +
        'changed after it follows.',
      lines: [
        { who: 'Zoë', whoUrl: 'https://mirror.example.com/coworkers/a/', rest: ' joined', imageUrl: null },
      ],
      more: null,
      link: { label: 'Coworkers', url: 'https://mirror.example.com/coworkers/' },
      footer: '2 runs up to 2026-11-25 09:00. Times in Europe/Paris.',
    });
    expect(digestMessage([], period, ctx, first)).toMatchObject({
      title: 'Team page since 2026-11-24 09:00: the mirror now follows 63 coworkers',
      lines: [],
      footer: '1 run up to 2026-11-25 09:00. Times in Europe/Paris.',
    });
  });
});
