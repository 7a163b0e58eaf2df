import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { capContradictions } from './caps.js';
import { findUnknownVariables } from './unknown-variables.js';
import { maskUrlCredentials, parseHeaderLine, type UpstreamTarget } from './upstream-target.js';
import { settingList, settings, type Setting, type SettingKey, type Settings } from './settings.js';
import { parseDuration } from '../time/duration.js';
import { chooseDatabase, type DatabaseTarget } from './database-url.js';

export { maskUrlCredentials, parseDuration };
export type { WebhookEventType } from './values.js';
export type { UpstreamTarget };
// The table's names stay importable from the loader, where callers found them before the split.
export { settingList, settingOf, settings } from './settings.js';
export type { Echo, ListedSetting, Setting, SettingKey, Settings } from './settings.js';

type GroupShape<G> = { [K in keyof G]: G[K] extends Setting<infer S> ? S : never };

/** The nested schema, built from the table: one z.object per concern, one leaf per setting. */
const configSchema = z.object(
  Object.fromEntries(
    Object.entries(settings).map(([group, leaves]) => [
      group,
      z.object(
        Object.fromEntries(Object.entries(leaves).map(([name, s]: [string, Setting]) => [name, s.schema])),
      ),
    ]),
  ),
) as unknown as z.ZodObject<{ [G in keyof Settings]: z.ZodObject<GroupShape<Settings[G]>> }>;

export type SettingValues = z.output<typeof configSchema>;

/** Flag values by setting key, as commander gives them (strings, or booleans for switches). */
export type FlagValues = Partial<Record<SettingKey, string | boolean | undefined>>;

/** Variables read outside the settings table; known, so never reported as typos. */
const OTHER_KNOWN_VARIABLES = ['NODE_ENV', 'NO_COLOR', 'FORCE_COLOR', 'TZ'];

interface Issue {
  name: string;
  problem: string;
}

/** The text each setting is parsed from (a flag beats its variable, an empty variable is unset). */
interface RawSettings {
  input: Record<string, Record<string, string | null>>;
  /** What an error calls each setting: the flag when a flag gave it, else the variable. */
  names: Map<SettingKey, string>;
  explicit: Set<SettingKey>;
}

function rawSettings(env: Readonly<Record<string, string | undefined>>, flags: FlagValues): RawSettings {
  const raw: RawSettings = { input: {}, names: new Map(), explicit: new Set() };
  for (const s of settingList) {
    const flag = flags[s.key];
    const fromFlag = flag !== undefined;
    const fromEnv = !fromFlag && env[s.env] !== undefined && env[s.env] !== '';
    (raw.input[s.group] ??= {})[s.name] = fromFlag
      ? String(flag)
      : fromEnv
        ? (env[s.env] ?? null)
        : s.default;
    if (fromFlag || fromEnv) raw.explicit.add(s.key);
    raw.names.set(s.key, fromFlag && s.flag ? s.flag : s.env);
  }
  return raw;
}

function shown(s: Setting, raw: string | null | undefined): string {
  if (raw === null || raw === undefined) return 'nothing';
  if (s.echo === 'secret') return `${raw.length} characters, not shown`;
  return JSON.stringify(s.echo === 'url' ? maskUrlCredentials(raw) : raw);
}

/** zod's issues, one per offending setting, in table order, named and with what was given. */
function issuesOf(error: z.ZodError, raw: RawSettings): Issue[] {
  const problems = new Map<string, string[]>();
  for (const issue of error.issues) {
    const key = issue.path.slice(0, 2).join('.');
    problems.set(key, [...(problems.get(key) ?? []), issue.message]);
  }
  const named = settingList.flatMap((s) => {
    const found = problems.get(s.key);
    if (!found) return [];
    problems.delete(s.key);
    const given = shown(s, raw.input[s.group]?.[s.name]);
    return [{ name: raw.names.get(s.key) ?? s.env, problem: `${found.join('; ')} (got ${given})` }];
  });
  // Only the table's leaves can be wrong, but an issue elsewhere must not vanish from the error.
  return [...named, ...[...problems].map(([key, found]) => ({ name: key, problem: found.join('; ') }))];
}

/**
 * Parses the environment and flags once (a flag beats its variable); throws ConfigError naming every
 * offending variable or flag and what it expects, never echoing a secret.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, flags: FlagValues = {}) {
  const raw = rawSettings(env, flags);
  const parsed = configSchema.safeParse(raw.input);
  if (!parsed.success) throw new ConfigError(issuesOf(parsed.error, raw));
  const issues: Issue[] = [];
  const config = derive(parsed.data, issues, raw.names.get('database.path') === '--db', raw.explicit);
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    ...config,
    /** Settings given by a variable or a flag rather than defaulted. */
    explicit: raw.explicit as ReadonlySet<SettingKey>,
    /** `NODE_ENV=production`: `start` then refuses to fall back to the demo. */
    production: env.NODE_ENV === 'production',
    /** Unknown variables that look like misspelt settings; the CLI warns about each. */
    unknownVariables: findUnknownVariables(env, {
      known: [...settingList.map((s) => s.env), ...OTHER_KNOWN_VARIABLES],
      ownedPrefixes: [...new Set(settingList.map((s) => `${s.env.split('_', 1)[0]}_`))].filter(
        (p) => settingList.filter((s) => s.env.startsWith(p)).length > 1,
      ),
    }),
  };
}

/**
 * What the settings imply together, worked out once so no caller re-derives it: the upstream target
 * (its URL, masked label and auth headers, in place of the URL, token and header it comes from; null
 * when none is named: the demo) and the media folder (MEDIA_DIR, else `media/` beside the database).
 */
function derive(
  values: SettingValues,
  issues: Issue[],
  dbFromFlag: boolean,
  explicit: ReadonlySet<SettingKey>,
) {
  const { url, token, header, ...upstream } = values.upstream;
  const database = databaseOf(values.database, issues, dbFromFlag, explicit);
  const target = url ? upstreamTarget(url, token, header, issues) : null;
  issues.push(...capContradictions(values.sync));
  if (values.demo.enabled && target) {
    issues.push({
      name: 'DEMO',
      problem: 'DEMO=1 runs the built-in simulated upstream, but UPSTREAM_URL is set too: unset one of them',
    });
  }
  return {
    ...values,
    upstream: { ...upstream, target },
    database,
    media: { ...values.media, dir: values.media.dir ?? join(mediaParent(database.target), 'media') },
  };
}

const PLACEHOLDER_TARGET: DatabaseTarget = { kind: 'sqlite', path: '', label: '' };

/** The chosen store (`chooseDatabase`): `--db` (a path or a URL), else DATABASE_URL or DATABASE_PATH. */
function databaseOf(
  values: SettingValues['database'],
  issues: Issue[],
  fromFlag: boolean,
  explicit: ReadonlySet<SettingKey>,
) {
  const choice = chooseDatabase({
    flag: fromFlag ? values.path : undefined,
    DATABASE_URL: values.url ?? undefined,
    DATABASE_PATH: !fromFlag && explicit.has('database.path') ? values.path : undefined,
    defaultPath: settings.database.path.default,
  });
  if (!choice.ok) issues.push(...choice.issues);
  const target = choice.ok ? choice.target : PLACEHOLDER_TARGET;
  // `path` stays the SQLite file's path (what SQLite-only features read); with PostgreSQL, its label.
  return { ...values, path: target.kind === 'sqlite' ? target.path : target.label, target };
}

/** Where files kept beside the database go: the SQLite file's folder, or ./data with PostgreSQL. */
function mediaParent(target: DatabaseTarget): string {
  return target.kind === 'sqlite' ? dirname(target.path) : dirname(settings.database.path.default);
}

/** The parsed configuration, nested by concern (`config.sync`, `config.server`, …). */
export type Config = ReturnType<typeof loadConfig>;
export type UpstreamConfig = Config['upstream'];
export type ServerConfig = Config['server'];
export type MediaConfig = Config['media'];
export type WebhooksConfig = Config['webhooks'];
/** The upstream group with a target named: what a run needs (`sync` refuses to start without one). */
export type NamedUpstream = UpstreamConfig & { target: UpstreamTarget };

/** Gathers the URL's credentials, the token and the header; two sources of Authorization is an error. */
function upstreamTarget(
  url: NonNullable<SettingValues['upstream']['url']>,
  token: string | null,
  headerText: string | null,
  issues: Issue[],
): UpstreamTarget {
  const headers: Record<string, string> = {};
  const sources: string[] = [];
  if (url.basicAuth) {
    headers.authorization = url.basicAuth;
    sources.push('the user:password in UPSTREAM_URL');
  }
  if (token) {
    headers.authorization = `Bearer ${token}`;
    sources.push('UPSTREAM_TOKEN');
  }
  const header = headerText ? parseHeaderLine(headerText) : null;
  if (header) {
    if (header[0] === 'authorization') sources.push('UPSTREAM_HEADER');
    headers[header[0]] = header[1];
  }
  if (sources.length > 1) {
    issues.push({
      name: 'UPSTREAM_TOKEN / UPSTREAM_HEADER',
      problem: `only one Authorization can be sent, but ${sources.join(' and ')} each set one: keep one`,
    });
  }
  return {
    url: url.url,
    label: url.label,
    headers,
    ...(url.basicAuth !== null ? { credentialsInUrl: true } : {}),
  };
}
