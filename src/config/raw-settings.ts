import { settingList, type ListedSetting, type SettingKey } from './setting-table.js';
import { maskUrlCredentials } from './upstream-target.js';

/** Flag values by setting key, as commander gives them (strings, or booleans for switches). */
export type FlagValues = Partial<Record<SettingKey, string | boolean | undefined>>;

/** One offending setting, as ConfigError lists them. */
export interface Issue {
  name: string;
  problem: string;
}

/** The text each setting is parsed from (a flag beats its variable, an empty variable is unset). */
export interface RawSettings {
  input: Record<string, Record<string, string | null>>;
  /** What an error calls each setting: the flag when a flag gave it, else the variable. */
  names: Map<SettingKey, string>;
  explicit: Set<SettingKey>;
}

/** The texts of the listed settings (every one unless told), as both config loaders read them. */
export function rawSettings(
  env: Readonly<Record<string, string | undefined>>,
  flags: FlagValues,
  list: readonly ListedSetting[] = settingList,
): RawSettings {
  const raw: RawSettings = { input: {}, names: new Map(), explicit: new Set() };
  for (const s of list) {
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

/** What was given, as an error may show it: never a secret, a URL's credentials masked. */
function shown(s: ListedSetting, raw: string | null | undefined): string {
  if (raw === null || raw === undefined) return 'nothing';
  if (s.echo === 'secret') return `${raw.length} characters, not shown`;
  return JSON.stringify(s.echo === 'url' ? maskUrlCredentials(raw) : raw);
}

/** One setting's problems as an issue: named by its flag or variable, with what was given. */
export function settingIssue(s: ListedSetting, problems: readonly string[], raw: RawSettings): Issue {
  const given = shown(s, raw.input[s.group]?.[s.name]);
  return { name: raw.names.get(s.key) ?? s.env, problem: `${problems.join('; ')} (got ${given})` };
}
