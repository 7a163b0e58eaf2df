/**
 * Date formatters, built once per zone: building an Intl.DateTimeFormat is slow beside formatting,
 * and a page formats every time it shows (a formatter built per call was a large part of `/`).
 * Zones are the configured one and a test's few, so the caches stay tiny.
 */
const clocks = new Map<string, Intl.DateTimeFormat>();
const walls = new Map<string, Intl.DateTimeFormat>();

function cached(
  cache: Map<string, Intl.DateTimeFormat>,
  timeZone: string,
  build: () => Intl.DateTimeFormat,
): Intl.DateTimeFormat {
  let format = cache.get(timeZone);
  if (!format) cache.set(timeZone, (format = build()));
  return format;
}

/** Year, month, day, hour and minute of the zone, two digits each (en-CA orders them ISO-like). */
export function clockFormat(timeZone: string): Intl.DateTimeFormat {
  return cached(
    clocks,
    timeZone,
    () =>
      new Intl.DateTimeFormat('en-CA', {
        timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }),
  );
}

/** Every wall-clock field of the zone down to the second, as numbers, for offset arithmetic. */
export function wallFormat(timeZone: string): Intl.DateTimeFormat {
  return cached(
    walls,
    timeZone,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }),
  );
}
