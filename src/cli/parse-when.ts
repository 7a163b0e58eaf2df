import { ConfigError } from '../errors.js';
import { parseWhen as parseWhenStrict } from '../time/parse-when.js';

/** `--since`/`--until`: a duration back from now or an ISO 8601 time, as stored ISO text. */
export function parseWhen(flag: string, value: string | undefined, now = Date.now()): string | undefined {
  if (value === undefined) return undefined;
  const parsed = parseWhenStrict(value, now);
  if (parsed.ok) return parsed.iso;
  throw new ConfigError([{ name: flag, problem: `${parsed.problem} (got ${JSON.stringify(value)})` }]);
}
