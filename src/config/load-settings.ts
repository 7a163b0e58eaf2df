import { ConfigError } from '../errors.js';
import { databaseOf, derive, type DatabaseConfig } from './derive-config.js';
import { rawSettings, settingIssues, type FlagValues, type Issue, type RawSettings } from './raw-settings.js';
import { refusedEntryOf } from './refused-value.js';
import type { SchemaKit } from './schema-kit.js';
import { settingList, type ListedSetting, type SettingKey } from './setting-table.js';
import { schemaOf, type SettingValues } from './setting-values.js';
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

/** What the loader tells of the variables, whichever settings it parsed. */
interface Told {
  /** Settings given by a variable or a flag rather than defaulted (among those parsed). */
  explicit: ReadonlySet<SettingKey>;
  /** `NODE_ENV=production`: `start` then refuses to fall back to the demo. */
  production: boolean;
  /** Unknown variables that look like misspelt settings; the CLI warns about each. */
  unknownVariables: UnknownVariable[];
}

/** The config of a command that only reads the store (`runs`): the store to read. */
export type StoreConfig = { database: DatabaseConfig } & Told;

/** The parsed configuration, nested by concern (`config.sync`, `config.server`, …). */
export type Config = ReturnType<typeof derive> & Told;

/**
 * What a command needs: every setting, parsed with the schemas zod's kit builds (`schema-kit.ts`,
 * which the caller loads, so this module never does), or the database settings alone, which need no zod.
 */
export type Need = { kit: SchemaKit } | { only: 'database' };

/**
 * The one settings loader. Reads the environment and flags once (a flag beats its variable), parses
 * the settings the command needs, and works out what they imply together (derive-config.ts). Throws
 * ConfigError naming every offending variable or flag and what it expects, never echoing a secret.
 */
export function loadSettings(env: Env, flags: FlagValues, need: { kit: SchemaKit }): Config;
export function loadSettings(env: Env, flags: FlagValues, need: { only: 'database' }): StoreConfig;
export function loadSettings(env: Env, flags: FlagValues, need: Need): Config | StoreConfig {
  const kit = 'kit' in need ? need.kit : null;
  const list = kit ? settingList : settingList.filter((s) => s.group === 'database');
  const raw = rawSettings(env, flags, list);
  const { values, issues } = parseSettings(list, raw, kit);
  if (issues.length > 0) throw new ConfigError(issues);
  const dbFromFlag = raw.names.get('database.path') === '--db';
  const settings = kit
    ? derive(values as SettingValues, issues, dbFromFlag, raw.explicit)
    : {
        database: databaseOf(
          (values as Pick<SettingValues, 'database'>).database,
          issues,
          dbFromFlag,
          raw.explicit,
        ),
      };
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    ...settings,
    explicit: raw.explicit,
    production: env.NODE_ENV === 'production',
    unknownVariables: unknownVariablesIn(env),
  };
}

type Env = Readonly<Record<string, string | undefined>>;

/** Each listed setting's text parsed by its schema, and every setting's problems in table order. */
function parseSettings(list: readonly ListedSetting[], raw: RawSettings, kit: SchemaKit | null) {
  const values: Record<string, Record<string, unknown>> = {};
  const issues: Issue[] = [];
  for (const s of list) {
    const parsed = schemaOf(s, kit).safeParse(raw.input[s.group]?.[s.name] ?? null);
    if (parsed.success) (values[s.group] ??= {})[s.name] = parsed.data;
    else issues.push(...settingIssues(s, parsed.error.issues.map(problemOf), raw));
  }
  return { values, issues };
}

/** A schema's issue as a problem of its setting: a list's entry issue names the entry it refused. */
const problemOf = (issue: { code: string; message: string; params?: unknown }) => ({
  message: issue.message,
  entry: issue.code === 'custom' ? refusedEntryOf(issue.params) : undefined,
});
