import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { derive } from './derive-config.js';
import { unknownVariablesIn } from './load-settings.js';
import {
  rawSettings,
  settingIssues,
  type FlagValues,
  type Issue,
  type Problem,
  type RawSettings,
} from './raw-settings.js';
import { refusedEntryOf } from './refused-value.js';
import { maskUrlCredentials, type UpstreamTarget } from './upstream-target.js';
import { settingList, type SettingKey } from './setting-table.js';
import { buildConfigSchema, type SettingValues } from './settings.js';
import { parseDuration } from '../time/duration.js';

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

/** The parsed configuration, nested by concern (`config.sync`, `config.server`, …). */
export type Config = ReturnType<typeof loadConfig>;
export type UpstreamConfig = Config['upstream'];
export type ServerConfig = Config['server'];
export type MediaConfig = Config['media'];
export type WebhooksConfig = Config['webhooks'];
/** The upstream group with a target named: what a run needs (`sync` refuses to start without one). */
export type NamedUpstream = UpstreamConfig & { target: UpstreamTarget };
