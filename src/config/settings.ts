import { z } from 'zod';
import { schemaKit, type SchemaKit } from './schema-kit.js';
import { settings, type Settings } from './setting-table.js';

// The table's names stay importable from here, where callers found them before the split.
export { CONTRACT_PAGE_SIZE, settingList, settingOf, settings } from './setting-table.js';
export type { Echo, ListedSetting, Setting, SettingKey, Settings } from './setting-table.js';

/** The zod schema one setting's `schema` builds, by the table's group and name. */
export type SettingSchema<G extends keyof Settings, N extends keyof Settings[G]> = Settings[G][N] extends {
  schema: (v: SchemaKit) => infer S extends z.ZodType;
}
  ? S
  : never;

/** The schema of the whole config: one z.object per group, one leaf per setting. */
export type ConfigSchema = z.ZodObject<{
  [G in keyof Settings]: z.ZodObject<{ [N in keyof Settings[G]]: SettingSchema<G, N> }>;
}>;

/** The settings' values as their schemas parse them, nested by group. */
export type SettingValues = z.output<ConfigSchema>;

type Leaves = Record<string, { schema: (v: SchemaKit) => z.ZodType; default: string | null }>;

// Built on first use and kept: a schema is built once per process, whoever asks first.
const built = new Map<string, z.ZodType>();
let configSchema: ConfigSchema | null = null;

/** One setting's schema, built from the table on first use. */
function schemaOf(group: string, name: string): z.ZodType {
  const key = `${group}.${name}`;
  const cached = built.get(key);
  if (cached) return cached;
  const setting = (settings as Record<string, Leaves>)[group]?.[name];
  if (!setting) throw new Error(`no setting ${key}`);
  const schema = setting.schema(schemaKit);
  built.set(key, schema);
  return schema;
}

/** The nested schema the loader parses the settings' texts with, built from the table once. */
export function buildConfigSchema(): ConfigSchema {
  configSchema ??= z.object(
    Object.fromEntries(
      Object.entries(settings).map(([group, leaves]) => [
        group,
        z.object(Object.fromEntries(Object.keys(leaves).map((name) => [name, schemaOf(group, name)]))),
      ]),
    ),
  ) as unknown as ConfigSchema;
  return configSchema;
}

/**
 * A setting's default as the value it parses to: where a module that can run without a Config
 * (the upstream client, the crawl, the snapshot holder) takes its defaults, so none is restated.
 */
export function defaultOf<G extends keyof Settings, N extends keyof Settings[G] & string>(
  group: G,
  name: N,
): z.output<SettingSchema<G, N>> {
  const schema = schemaOf(group, name);
  const text = (settings as Record<string, Leaves>)[group]?.[name]?.default;
  if (text === undefined) throw new Error(`no setting ${group}.${name}`);
  return schema.parse(text) as z.output<SettingSchema<G, N>>;
}
