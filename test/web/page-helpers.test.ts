import { describe, expect, it } from 'vitest';
import type { ChangeRow } from '../../src/db/schema.js';
import { changeSentence } from '../../src/web/change-text.js';
import { clip, durationWords } from '../../src/web/format.js';
import { imageOrigin, upstreamMedia } from '../../src/web/media-source.js';
import { contentSecurityPolicy } from '../../src/web/render.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { Scheduler } from '../../src/sync/scheduler.js';
import { statusSourceFor } from '../../src/main.js';
import { nextCronRun } from '../../src/sync/next-cron-run.js';

const change = (overrides: Partial<ChangeRow>): ChangeRow => ({
  id: 1,
  runId: 2,
  at: '2026-03-03T10:00:00.000Z',
  uuid: 'a'.repeat(32),
  slot: 0,
  kind: 'added',
  field: null,
  oldValue: null,
  newValue: null,
  ...overrides,
});

describe('page helpers', () => {
  it.each([
    [change({ kind: 'added' }), { name: 'Zoë', post: 'QA engineer' }, 'Zoë joined as QA engineer'],
    [
      change({ kind: 'changed', field: 'post', oldValue: '"qa engineer"', newValue: '"QA lead"' }),
      { name: 'José Álvarez', post: 'QA lead' },
      "José Álvarez: post 'qa engineer' → 'QA lead'",
    ],
    [change({ kind: 'removed' }), { name: 'Kate', post: 'Designer' }, 'Kate left'],
    [change({ kind: 'returned' }), { name: 'Seán', post: '' }, 'Seán returned'],
    [
      change({ kind: 'changed', field: 'show_image', oldValue: 'true', newValue: 'false' }),
      { name: 'Ada', post: '' },
      "Ada: show image 'yes' → 'no'",
    ],
    [change({ kind: 'removed' }), { name: ' ', post: '' }, `${'a'.repeat(32)} left`],
  ])('sentence %#', (row, subject, sentence) => {
    expect(changeSentence(row, subject)).toBe(sentence);
  });

  it('clip cuts by UTF-8 bytes, never inside a character, and says how much there was', () => {
    expect(clip('short', 10)).toEqual({ text: 'short', cutFrom: null });
    const cut = clip('é'.repeat(100), 11);
    expect(cut).toEqual({ text: 'é'.repeat(5), cutFrom: 200 });
    const emoji = clip('😀'.repeat(10), 6);
    expect(emoji.text).toBe('😀');
  });

  it('durations in words keep the two largest units', () => {
    expect(durationWords(450)).toBe('450 ms');
    expect(durationWords(93 * 60_000 + 5000)).toBe('1 hour 33 minutes');
    expect(durationWords(2 * 86_400_000 + 3_600_000)).toBe('2 days 1 hour');
  });

  it.each([
    ['https://media.example.com/team/a.png', 'https://media.example.com/team/a.png'],
    ['http://media.example.com/team/A.JPEG?x=1', 'http://media.example.com/team/A.JPEG?x=1'],
    ['https://media.example.com/team/a.mp4', null],
    ['javascript:alert(1)//.png', null],
    ['data:image/png;base64,AAAA.png', null],
    ['https://u:p@media.example.com/a.png', null],
    [`https://media.example.com/${'a'.repeat(3000)}.png`, null],
  ])('shows %s as %s', (url, src) => {
    expect(upstreamMedia.imageSrc(url)).toBe(src);
  });

  it('the CSP allows images from self and exactly the origins shown', () => {
    expect(imageOrigin('/media/abc/a.png')).toBeNull();
    expect(imageOrigin('https://media.example.com/a.png')).toBe('https://media.example.com');
    expect(contentSecurityPolicy(['https://b.example', 'https://a.example'])).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https://a.example https://b.example; " +
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
  });

  it('the next cron run is in the future and on the schedule', () => {
    const next = nextCronRun('*/10 * * * *');
    expect(next).not.toBeNull();
    expect(next!.getTime()).toBeGreaterThan(Date.now() - 1000);
    expect(next!.getUTCMinutes() % 10).toBe(0);
    expect(next!.getUTCSeconds()).toBe(0);
  });

  it('start tells the status page its mode, its masked upstream and its schedule', () => {
    const scheduler = { running: true } as Scheduler;
    const demo = statusSourceFor(loadConfig({}), 'http://127.0.0.1:4567', scheduler);
    expect(demo.upstream()).toEqual({ mode: 'demo', url: 'http://127.0.0.1:4567' });
    expect(demo.syncRunning()).toBe(true);
    const config = loadConfig({ UPSTREAM_URL: 'https://user:pw@team.example.com', SYNC_RANDOM_DELAY: '30s' });
    const real = statusSourceFor(config, config.upstream.target?.label ?? '', scheduler);
    expect(real.upstream()).toEqual({ mode: 'upstream', url: 'https://user:***@team.example.com' });
    expect(real.randomDelayMs).toBe(30_000);
    expect(real.nextRunAt()?.getUTCMinutes()).toSatisfy((m: number) => m % 10 === 0);
  });
});
