import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { capContradictions } from './caps.js';
import { listenerContradictions } from './listeners.js';
import { databaseOf, unknownVariablesIn } from './load-settings.js';
import {
  rawSettings,
  settingIssues,
  type FlagValues,
  type Issue,
  type Problem,
  type RawSettings,
} from './raw-settings.js';
import { refusedEntryOf } from './refused-value.js';
import { maskUrlCredentials, parseHeaderLine, type UpstreamTarget } from './upstream-target.js';
import { settingList, type SettingKey } from './setting-table.js';
import { buildConfigSchema, type SettingValues } from './settings.js';
import { parseDuration } from '../time/duration.js';
import { mediaFolderOf } from './media-dir.js';

export { maskUrlCredentials, parseDuration };
export type { WebhookEventType } from './webhook-events.js';
export type { UpstreamTarget };
export type { FlagValues } from './raw-settings.js';
// The table's names stay importable from the loader, where callers found them before the split.
export { settingList, settingOf, settings } from './setting-table.js';
export type { Echo, ListedSetting, Setting, SettingKey, Settings } from './setting-table.js';

export type { SettingValues };

/** zod's issues, by offending setting in table order (an entry of a list on its own), with what was given. */
function issuesOf(error: z.ZodError, raw: RawSettings): Issue[] {
  const problems = new Map<string, Problem[]>();
  for (const issue of error.issues) {
    const key = issue.path.slice(0, 2).join('.');
    const entry = issue.code === 'custom' ? refusedEntryOf(issue.params) : undefined;
    problems.set(key, [...(problems.get(key) ?? []), { message: issue.message, entry }]);
  }
  const named = settingList.flatMap((s) => {
    const found = problems.get(s.key);
    if (!found) return [];
    problems.delete(s.key);
    return settingIssues(s, found, raw);
  });
  // Only the table's leaves can be wrong, but an issue elsewhere must not vanish from the error.
  return [
    ...named,
    ...[...problems].map(([key, found]) => ({ name: key, problem: found.map((p) => p.message).join('; ') })),
  ];
}

/**
 * Parses the environment and flags once (a flag beats its variable); throws ConfigError naming every
 * offending variable or flag and what it expects, never echoing a secret.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, flags: FlagValues = {}) {
  const raw = rawSettings(env, flags);
  const parsed = buildConfigSchema().safeParse(raw.input);
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
    unknownVariables: unknownVariablesIn(env),
  };
}

/**
 * What the settings imply together, worked out once so no caller re-derives it: the upstream target
 * (its URL, masked label and auth headers, in place of the URL, token and header it comes from; null
 * when none is named: the demo) and the media folder (MEDIA_DIR, else the database's own: media-dir.ts).
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
  issues.push(...listenerContradictions(values.server));
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
    media: { ...values.media, ...mediaFolderOf(database.target, values.media.dir) },
  };
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
