import type { DatabaseTarget } from '../config/database-url.js';
import { settingList, settings, type Config, type NamedUpstream } from '../config/load-config.js';

/** What a child sync runs with: the parent's settings, with the upstream (the demo's) named. */
export type ChildSyncConfig = Pick<Config, 'database' | 'sync' | 'server' | 'media' | 'log'> & {
  upstream: NamedUpstream;
};

/**
 * The variables that give a child `sync` process the settings of this `start`. The child inherits
 * the environment, so only what the environment may not say travels: every setting that has a flag
 * (a flag of `start` may have set it), the upstream (the demo's URL is known only here) and
 * MEDIA_ORIGINS (the demo adds its media host). Names come from the settings table.
 */
export function syncEnvFrom(config: ChildSyncConfig): Record<string, string> {
  const env: Record<string, string> = {};
  for (const s of settingList) {
    if (s.group === 'database') continue;
    if (s.flag === null && s.env !== settings.media.origins.env) continue;
    const text = asVariable(
      (config as Record<string, Record<string, unknown> | undefined>)[s.group]?.[s.name],
    );
    if (text !== null) env[s.env] = text;
  }
  Object.assign(env, databaseEnv(config.database.target));
  const { target } = config.upstream;
  // The URL's credentials travel as the Authorization header of the parsed target; the child
  // parses them again from the URL, whether they came from the environment or --upstream. A Basic
  // header of UPSTREAM_HEADER stays where it was: the child inherits that variable.
  env[settings.upstream.url.env] =
    target.credentialsInUrl === true ? withBasicCredentials(target.url, target.headers) : target.url;
  // The child's upstream is always named (the demo's own under DEMO=1): an inherited DEMO=1 beside
  // it would be refused as a contradiction. An empty variable is unset.
  env[settings.demo.enabled.env] = '';
  return env;
}

/**
 * The store chosen, as the one variable that names it (the other emptied, so an inherited one does
 * not contradict it). A URL travels in the environment, never in arguments others can read.
 */
function databaseEnv(target: DatabaseTarget): Record<string, string> {
  return target.kind === 'sqlite'
    ? { [settings.database.path.env]: target.path, [settings.database.url.env]: '' }
    : { [settings.database.url.env]: asGiven(target.connectionString), [settings.database.path.env]: '' };
}

/** The URL as a person writes it: without the `pg` switch the parser appends (last) for sslmode. */
function asGiven(connectionString: string): string {
  return connectionString.replace(/&uselibpqcompat=true$/, '');
}

/** A parsed value as its variable's text: lists comma-joined, numbers (durations in ms) as digits. */
function asVariable(value: unknown): string | null {
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  return null;
}

/** `url` with the user and password of a Basic `authorization` header put back into it. */
function withBasicCredentials(url: string, headers: Record<string, string>): string {
  const basic = /^Basic (.+)$/i.exec(headers.authorization ?? '');
  if (!basic?.[1]) return url;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(colon < 0 ? decoded : decoded.slice(0, colon));
  parsed.password = colon < 0 ? '' : encodeURIComponent(decoded.slice(colon + 1));
  return parsed.toString();
}
