import { parseDuration } from './duration.js';

/**
 * Strict time parsing shared by the CLI and the HTTP API. `Date.parse` is lenient in ways that
 * matter here: it rolls `2026-02-30` over to March 2 and accepts expanded years such as
 * `+275760-09-13`, whose ISO text then sorts before every stored time. Only what this accepts can
 * reach a query, always normalised to `toISOString()` form: with years 0001–9999 that text has a
 * fixed width, so comparing two of them as text is comparing them as instants.
 */

export type WhenResult = { ok: true; ms: number; iso: string } | { ok: false; problem: string };

const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

const MIN_YEAR = 1;
const MAX_YEAR = 9999;

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] ?? 0);
}

function offsetMinutes(zone: string | undefined): number | null {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const match = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (!match) return null;
  const hours = Number(match[2]);
  const minutes = Number(match[3]);
  if (hours > 23 || minutes > 59) return null;
  return (match[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

function fail(problem: string): WhenResult {
  return { ok: false, problem };
}

function instantOf(ms: number): WhenResult {
  const year = new Date(ms).getUTCFullYear();
  if (!(year >= MIN_YEAR && year <= MAX_YEAR)) {
    return fail(`expected a time between years ${MIN_YEAR} and ${MAX_YEAR}`);
  }
  return { ok: true, ms, iso: new Date(ms).toISOString() };
}

/**
 * An ISO 8601 date or date-time (`2026-11-21`, `2026-11-21T10:00:00Z`, `…+02:00`); without an
 * offset it is UTC. Impossible dates (`2026-02-30`, hour 24) and years outside 0001–9999 fail.
 */
export function parseInstant(text: string): WhenResult {
  const match = ISO_INSTANT.exec(text.trim());
  if (!match) return fail('expected an ISO 8601 time such as 2026-11-21T10:00:00Z');
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < MIN_YEAR || year > MAX_YEAR) return fail(`expected a year from ${MIN_YEAR} to ${MAX_YEAR}`);
  if (month < 1 || month > 12) return fail(`no month ${month}`);
  if (day < 1 || day > daysInMonth(year, month)) return fail(`no day ${day} in ${y}-${mo}`);
  const [hour, minute, second] = [Number(h), Number(mi), Number(s)];
  if (hour > 23 || minute > 59 || second > 59) return fail(`no time ${h}:${mi}:${s}`);
  const offset = offsetMinutes(zone);
  if (offset === null) return fail(`no UTC offset ${zone ?? ''}`);
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  return instantOf(utc.getTime() - offset * 60_000);
}

/** A duration back from `now` (`7d`, `12h`, `30m`) or an ISO 8601 time. */
export function parseWhen(text: string, now = Date.now()): WhenResult {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?\s*(?:ms|s|m|h|d)?$/.test(trimmed)) {
    const ms = parseDuration(trimmed);
    if (ms === null || !Number.isFinite(ms)) return fail('expected a duration like 7d or 12h');
    return instantOf(now - ms);
  }
  const instant = parseInstant(trimmed);
  if (instant.ok || ISO_INSTANT.test(trimmed)) return instant;
  return fail('expected an ISO 8601 time or a duration like 7d, 12h');
}
