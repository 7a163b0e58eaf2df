import { describe, expect, it } from 'vitest';
import { parseInstant, parseWhen } from '../../src/time/parse-when.js';

const NOW = Date.parse('2026-11-22T12:00:00.000Z');

describe('parseInstant', () => {
  it.each([
    ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T10:00:00.5Z', '2026-11-21T10:00:00.500Z'],
    ['2026-11-21T10:00:00.123456Z', '2026-11-21T10:00:00.123Z'],
    ['2026-11-21T10:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T12:00:00+02:00', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T05:30:00-0430', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21', '2026-11-21T00:00:00.000Z'],
    ['2026-11-21T10:00:00', '2026-11-21T10:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('%s is %s', (text, iso) => {
    expect(parseInstant(text)).toEqual({ ok: true, ms: Date.parse(iso), iso });
  });

  it.each([
    ['2026-02-30', 'no day 30 in 2026-02'],
    ['2025-02-29', 'no day 29 in 2025-02'],
    ['1900-02-29', 'no day 29 in 1900-02'],
    ['2026-04-31T00:00:00Z', 'no day 31 in 2026-04'],
    ['2026-13-01', 'no month 13'],
    ['2026-00-10', 'no month 0'],
    ['2026-11-00', 'no day 0 in 2026-11'],
    ['2026-11-21T24:00:00Z', 'no time 24:00:00'],
    ['2026-11-21T10:60:00Z', 'no time 10:60:00'],
    ['2026-11-21T10:00:61Z', 'no time 10:00:61'],
    ['2026-11-21T10:00:00+25:00', 'no UTC offset +25:00'],
    ['0000-01-01T00:00:00Z', 'expected a year from 1 to 9999'],
    ['+275760-09-13T00:00:00Z', 'expected an ISO 8601 time such as 2026-11-21T10:00:00Z'],
    ['-000001-01-01T00:00:00Z', 'expected an ISO 8601 time such as 2026-11-21T10:00:00Z'],
    ['9999-12-31T23:59:59-01:00', 'expected a time between years 1 and 9999'],
    ['yesterday', 'expected an ISO 8601 time such as 2026-11-21T10:00:00Z'],
    ['Sat, 21 Nov 2026 10:00:00 GMT', 'expected an ISO 8601 time such as 2026-11-21T10:00:00Z'],
  ])('%s is refused: %s', (text, problem) => {
    expect(parseInstant(text)).toEqual({ ok: false, problem });
  });
});

describe('parseWhen', () => {
  it.each([
    ['7d', NOW - 7 * 86_400_000],
    ['12h', NOW - 12 * 3_600_000],
    ['90s', NOW - 90_000],
    ['1500', NOW - 1500],
    ['2026-11-21T10:00:00Z', Date.parse('2026-11-21T10:00:00Z')],
  ])('%s', (text, ms) => {
    expect(parseWhen(text, NOW)).toEqual({ ok: true, ms, iso: new Date(ms).toISOString() });
  });

  it.each([
    ['yesterday', 'expected an ISO 8601 time or a duration like 7d, 12h'],
    ['2026-02-30', 'no day 30 in 2026-02'],
    ['+275760-09-13T00:00:00Z', 'expected an ISO 8601 time or a duration like 7d, 12h'],
    ['999999999d', 'expected a time between years 1 and 9999'],
    [`${'9'.repeat(400)}d`, 'expected a duration like 7d or 12h'],
  ])('%s is refused: %s', (text, problem) => {
    expect(parseWhen(text, NOW)).toEqual({ ok: false, problem });
  });

  it('normalised times compare as text exactly as they compare as instants', () => {
    const texts = ['0001-01-01', '0999-12-31T23:00:00-02:00', '2026-11-21T10:00:00+14:00', '9999-01-01'];
    const parsed = texts.map((t) => parseWhen(t, NOW)).map((r) => (r.ok ? r : null));
    for (const a of parsed) {
      for (const b of parsed) {
        if (!a || !b) throw new Error('all parse');
        expect(a.iso < b.iso).toBe(a.ms < b.ms);
      }
    }
  });
});
