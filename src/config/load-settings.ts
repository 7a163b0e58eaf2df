import { ConfigError } from '../errors.js';
import { databaseSettingParsers } from './database-url.js';
import { databaseOf, type DatabaseConfig } from './derive-config.js';
import { rawSettings, settingIssues, type FlagValues, type Issue } from './raw-settings.js';
import { settingList, settingOf, type SettingKey } from './setting-table.js';
import type { Parsed } from './text-values.js';
import { findUnknownVariables, type UnknownVariable } from './unknown-variables.js';

/** Variables read outside the settings table; known, so never reported as typos. */
const OTHER_KNOWN_VARIABLES = ['NODE_ENV', 'NO_COLOR', 'FORCE_COLOR', 'TZ'];

/** Unknown variables that look like misspelt settings; the CLI warns about each. */
export function unknownVariablesIn(env: Readonly<Record<string, string | undefined>>): UnknownVariable[] {
  return findUnknownVariables(env, {
    known: [...settingList.map((s) => s.env), ...OTHER_KNOWN_VARIABLES],
    ownedPrefixes: [...new Set(settingList.map((s) => `${s.env.split('_', 1)[0]}_`))].filter(
      (p) => settingList.filter((s) => s.env.startsWith(p)).length > 1,
    ),
  });
}

/**
 * What a read command's config holds: the store to read, and what loadConfig tells of the variables
 * (`explicit` among the database settings alone). Stated here, not picked from loadConfig's Config,
 * so the full loader builds on this one and never the reverse.
 */
export interface StoreConfig {
  database: DatabaseConfig;
  /** Settings given by a variable or a flag rather than defaulted. */
  explicit: ReadonlySet<SettingKey>;
  /** Unknown variables that look like misspelt settings; the CLI warns about each. */
  unknownVariables: UnknownVariable[];
}

/**
 * The config of a command that only reads the store (`runs`): the database settings alone, parsed
 * by the same parsers as loadConfig's schemas (and to the same values and errors, tested), without
 * zod, which would cost such a command about a bare `node`'s start-up again. Throws ConfigError
 * naming every offending database setting; the other settings are not its business.
 */
export function loadStoreConfig(
  env: Readonly<Record<string, string | undefined>>,
  flags: FlagValues = {},
): StoreConfig {
  const keys = [
    'database.path',
    'database.url',
    'database.poolMax',
    'database.probeTimeoutMs',
    'database.readTimeoutMs',
    'database.syncLockTimeoutMs',
    'database.syncStatementTimeoutMs',
  ] as const;
  const raw = rawSettings(env, flags, keys.map(settingOf));
  const issues: Issue[] = [];
  const parse = <T>(key: (typeof keys)[number], parser: (text: string) => Parsed<T>): T | null => {
    const s = settingOf(key);
    const text = raw.input[s.group]?.[s.name] ?? null;
    if (text === null) return null;
    const parsed = parser(text);
    if (!parsed.ok) issues.push(...settingIssues(s, [{ message: parsed.problem }], raw));
    return parsed.ok ? parsed.value : null;
  };
  const path = parse('database.path', databaseSettingParsers.path);
  const url = parse('database.url', databaseSettingParsers.url);
  const poolMax = parse('database.poolMax', databaseSettingParsers.poolMax);
  const deadlines = {
    probeTimeoutMs: parse('database.probeTimeoutMs', databaseSettingParsers.timeout),
    readTimeoutMs: parse('database.readTimeoutMs', databaseSettingParsers.timeout),
    syncLockTimeoutMs: parse('database.syncLockTimeoutMs', databaseSettingParsers.timeout),
    syncStatementTimeoutMs: parse('database.syncStatementTimeoutMs', databaseSettingParsers.timeout),
  };
  if (issues.length > 0 || path === null || poolMax === null || !allGiven(deadlines)) {
    throw new ConfigError(issues);
  }
  const database = databaseOf(
    { path, url, poolMax, ...deadlines },
    issues,
    raw.names.get('database.path') === '--db',
    raw.explicit,
  );
  if (issues.length > 0) throw new ConfigError(issues);
  return { database, explicit: raw.explicit, unknownVariables: unknownVariablesIn(env) };
}

/** Every value present (each has a default, so only a refused one is null). */
function allGiven<T extends Record<string, number | null>>(
  values: T,
): values is { [K in keyof T]: Exclude<T[K], null> } {
  return Object.values(values).every((v) => v !== null);
}
