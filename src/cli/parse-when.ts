import { parseDuration } from '../config.js';
import { ConfigError } from '../errors.js';

/** `7d` / `12h` back from now, or an ISO 8601 time; normalised to the stored ISO form. */
export function parseWhen(flag: string, value: string | undefined, now = Date.now()): string | undefined {
  if (value === undefined) return undefined;
  const duration = /^\d/.test(value) && !value.includes('-') ? parseDuration(value) : null;
  if (duration !== null) return new Date(now - duration).toISOString();
  const time = Date.parse(value);
  if (Number.isNaN(time)) {
    throw new ConfigError([
      {
        name: flag,
        problem: `expected an ISO 8601 time or a duration like 7d, 12h (got ${JSON.stringify(value)})`,
      },
    ]);
  }
  return new Date(time).toISOString();
}
