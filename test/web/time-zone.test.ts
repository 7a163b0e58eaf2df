import { afterEach, describe, expect, it } from 'vitest';
import { configuredTimeZone, localClock } from '../../src/web/time-zone.js';

const before = process.env.TZ;
afterEach(() => {
  if (before === undefined) delete process.env.TZ;
  else process.env.TZ = before;
});

describe('the pages’ zone and clock, kept between requests', () => {
  it('follows a change of TZ although the zone is kept', () => {
    process.env.TZ = 'Europe/Paris';
    expect(configuredTimeZone()).toBe('Europe/Paris');
    process.env.TZ = 'Asia/Tokyo';
    expect(configuredTimeZone()).toBe('Asia/Tokyo');
  });

  it('gives each zone its own clock for one instant, again and again', () => {
    const at = '2026-11-24T08:10:00.000Z';
    for (let i = 0; i < 3; i++) {
      expect(localClock(at, 'Europe/Paris')).toBe('2026-11-24 09:10');
      expect(localClock(at, 'Asia/Tokyo')).toBe('2026-11-24 17:10');
    }
  });
});
