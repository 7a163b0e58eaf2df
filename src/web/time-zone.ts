import { localClock } from '../notify/message.js';
import { wallFormat } from '../time/date-formats.js';

/**
 * The pages' one zone: the configured `TZ` (the process's zone unless a test names another). Every
 * time on a page, the timeline's days, the run picker and the "as of" picker use it, and say so;
 * times read as the messages write them (`localClock`: "2026-11-24 09:10").
 */
export function configuredTimeZone(): string {
  // Building a DateTimeFormat to ask it the zone is slow to do several times per page;
  // Node follows a change of TZ, so the answer is kept per value of TZ.
  const tz = process.env.TZ;
  if (zoneOf === undefined || zoneOf.tz !== tz) {
    zoneOf = { tz, zone: Intl.DateTimeFormat().resolvedOptions().timeZone };
  }
  return zoneOf.zone;
}

let zoneOf: { tz: string | undefined; zone: string } | undefined;

export { localClock };

/** The zone's calendar day of an instant, "2026-11-24". */
export function localDay(iso: string, timeZone: string): string {
  return localClock(iso, timeZone).slice(0, 10);
}

/** An instant as a `datetime-local` input's value in the zone, "2026-11-24T09:10". */
export function localInputValue(iso: string, timeZone: string): string {
  return localClock(iso, timeZone).replace(' ', 'T');
}

/** The zone's offset from UTC at `instant`, in ms (wall clock minus UTC). */
function offsetMs(instant: number, timeZone: string): number {
  const parts = wallFormat(timeZone).formatToParts(new Date(instant));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return wall - Math.floor(instant / 1000) * 1000;
}

const WALL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?$/;

/**
 * A wall-clock time of the zone ("2026-11-24", "2026-11-24T09:10", as date and datetime-local
 * inputs send them) as an instant; a date alone is its first or last millisecond. Null when `text`
 * is no such wall time (an ISO time with an offset is the caller's to parse).
 */
export function instantOfLocal(text: string, timeZone: string, edge: 'start' | 'end'): Date | null {
  const m = WALL.exec(text);
  if (!m) return null;
  const n = (i: number, otherwise: number): number => (m[i] === undefined ? otherwise : Number(m[i]));
  const end = edge === 'end' && m[4] === undefined;
  const wall = Date.UTC(
    n(1, 0),
    n(2, 1) - 1,
    n(3, 1),
    n(4, end ? 23 : 0),
    n(5, end ? 59 : 0),
    n(6, end ? 59 : 0),
    m[7] === undefined ? (end ? 999 : 0) : Number(m[7].padEnd(3, '0')),
  );
  // Date.UTC rolls 31 February over into March: such a day does not exist.
  if (Number.isNaN(wall) || new Date(wall).getUTCDate() !== n(3, 1)) return null;
  // Two passes settle a guess that crossed an offset change; in a DST gap, the later instant.
  let guess = wall - offsetMs(wall, timeZone);
  guess = wall - offsetMs(guess, timeZone);
  return new Date(guess);
}
