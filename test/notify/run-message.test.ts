import { describe, expect, it } from 'vitest';
import { plainText, type FirstListing, type NotifyMessage } from '../../src/notify/message.js';
import { runChangesMessage, runMessages } from '../../src/notify/run-message.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

describe("a run's message from what the run stored (issue 22)", () => {
  it('names everyone concerned, in the words of the pages, at most 20 then "and N more"', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 7, count: 30 });
    await sync(store, upstream);
    upstream.data.edit(3);
    upstream.data.add(25);
    const { runId } = await sync(store, upstream);
    const run = await store.getRun(runId);
    const changes = (await store.listChanges({ limit: 1000 }))
      .filter((c) => c.runId === runId)
      .sort((a, b) => a.id - b.id);
    const ctx = { baseUrl: 'https://mirror.example.com', timeZone: 'UTC' };
    const message = runChangesMessage(
      { id: runId, finishedAt: run?.finishedAt ?? '' },
      changes,
      await store.changeSubjects(changes),
      ctx,
    );
    expect(message.title).toBe('Team page: 25 joined, 3 changed');
    expect(message.lines).toHaveLength(20);
    expect(message.more).toEqual({
      count: changes.length - 20,
      url: `https://mirror.example.com/runs/${runId}/`,
    });
    const text = plainText(message);
    for (const change of changes.slice(0, 20)) {
      expect(text).toContain(`https://mirror.example.com/coworkers/${change.uuid}/`);
    }
    expect(message.lines.every((l) => l.who !== '' && !/^[0-9a-z]{32}$/.test(l.who))).toBe(true);
  });
});

describe('the messages one run calls for', () => {
  const ctx = { baseUrl: null, timeZone: 'UTC' };
  const run = (status: 'succeeded' | 'failed', errorMessage: string | null = null) => ({
    id: 9,
    status,
    finishedAt: '2026-11-24T09:40:00Z',
    errorMessage,
  });
  const base = {
    changes: [],
    streakSince: '2026-11-24T09:10:00Z',
    servingSince: '2026-11-24T08:50:00Z',
    failureThreshold: 3,
  };
  const first = (coworkers: number, entries: number): FirstListing => ({
    runId: 9,
    finishedAt: '2026-11-24T09:40:00Z',
    coworkers,
    entries,
  });
  const kate = {
    kind: 'removed' as const,
    field: null,
    old: null,
    new: null,
    uuid: 'k',
    slot: 0,
    name: 'Kate',
    post: '',
  };

  it.each([
    [
      'the failure that reaches the threshold',
      { run: run('failed', 'upstream answered 503'), failedStreak: 3 },
      ['failures'],
    ],
    ['a failure before it', { run: run('failed', 'upstream answered 503'), failedStreak: 2 }, []],
    [
      'a failure past it (told once per streak)',
      { run: run('failed', 'upstream answered 503'), failedStreak: 4 },
      [],
    ],
    [
      'a success after a told streak, with changes',
      { run: run('succeeded'), failedStreak: 4, changes: [kate] },
      ['recoveries', 'changes'],
    ],
    ['a success after an untold streak', { run: run('succeeded'), failedStreak: 2 }, []],
    ['a success with changes', { run: run('succeeded'), failedStreak: 0, changes: [kate] }, ['changes']],
    ['a first listing', { run: run('succeeded'), failedStreak: 0, firstListing: first(63, 63) }, ['changes']],
    [
      'a first listing after a told streak',
      { run: run('succeeded'), failedStreak: 3, firstListing: first(63, 63) },
      ['recoveries', 'changes'],
    ],
  ] as const)('%s', (_name, outcome, events) => {
    expect(runMessages({ ...base, ...outcome }, ctx).map((m) => m.event)).toEqual(events);
  });

  it('tells a first listing as one count, whoever it lists: never a sentence per person, never "joined"', () => {
    const told = (listing: FirstListing, baseUrl: string | null) =>
      runMessages(
        { ...base, run: run('succeeded'), failedStreak: 0, changes: [kate], firstListing: listing },
        {
          baseUrl,
          timeZone: 'Europe/Paris',
        },
      );
    expect(told(first(1, 1), 'https://mirror.example.com')).toEqual([
      {
        event: 'changes',
        title: 'Team page: the mirror now follows 1 coworker',
        summary:
          "The mirror's first sync, run 9 at 2026-11-24 10:40, found 1 coworker on the team page. From now " +
          'on, messages say who joins, leaves, returns or changes.',
        lines: [],
        more: null,
        link: { label: 'Coworkers', url: 'https://mirror.example.com/coworkers/' },
        footer: 'Run 9 finished 2026-11-24 10:40. Times in Europe/Paris.',
      },
    ]);
    const [repeated] = told(first(61, 63), null);
    expect(repeated).toMatchObject({
      title: 'Team page: the mirror now follows 61 coworkers',
      summary: expect.stringContaining(
        'found 61 coworkers on the team page (63 entries: some are listed more than once).',
      ) as string,
      link: null,
    });
    expect(plainText(repeated as NotifyMessage)).not.toMatch(/joined/i);
  });

  it('says a failure in one sentence, times in the zone', () => {
    const [message] = runMessages(
      { ...base, run: run('failed', 'upstream answered 503'), failedStreak: 3 },
      { baseUrl: null, timeZone: 'Europe/Paris' },
    );
    expect(message?.summary).toBe(
      'The mirror has failed 3 runs in a row since 2026-11-24 10:10: upstream answered 503. It keeps serving the snapshot of 2026-11-24 09:50.',
    );
  });
});
