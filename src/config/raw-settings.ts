import { settingList, type ListedSetting, type SettingKey } from './setting-table.js';
import { describeRefused, type RefusedEntry } from './refused-value.js';

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

/** One thing wrong with a setting's value: what and the fix, and the entry it is about in a list. */
export interface Problem {
  message: string;
  entry?: RefusedEntry | undefined;
}

/**
 * One setting's problems as issues, named by its flag or variable: one for the value as a whole,
 * one per refused entry of a list; each described by `describeRefused`, so a setting that may hold
 * a secret (its `echo`) never has it quoted.
 */
export function settingIssues(s: ListedSetting, problems: readonly Problem[], raw: RawSettings): Issue[] {
  const name = raw.names.get(s.key) ?? s.env;
  const whole = problems.filter((p) => p.entry === undefined).map((p) => p.message);
  const issues = problems.flatMap(({ message, entry }) =>
    entry ? [{ name, problem: describeRefused(s.echo, entry.text, message, entry) }] : [],
  );
  if (whole.length === 0) return issues;
  const text = raw.input[s.group]?.[s.name];
  const problem =
    text === null || text === undefined
      ? `${whole.join('; ')} (got nothing)`
      : describeRefused(s.echo, text, whole.join('; '));
  return [{ name, problem }, ...issues];
}
