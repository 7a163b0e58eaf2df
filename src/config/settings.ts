import { schemaKit } from './schema-kit.js';
import { settingOf, type SettingKey, type Settings } from './setting-table.js';
import { schemaOf, type SettingValues } from './setting-values.js';

// The table's names stay importable from here, where callers found them before the split.
export { CONTRACT_PAGE_SIZE, settingList, settingOf, settings } from './setting-table.js';
export type { Echo, ListedSetting, Setting, SettingKey, Settings } from './setting-table.js';
export type { SettingValues } from './setting-values.js';

/**
 * A setting's default as the value it parses to: where a module that can run without a Config
 * (the upstream client, the crawl, the snapshot holder) takes its defaults, so none is restated.
 */
export function defaultOf<G extends keyof Settings, N extends keyof Settings[G] & string>(
  group: G,
  name: N,
): SettingValues[G][N] {
  const s = settingOf(`${group}.${name}` as SettingKey);
  const parsed = schemaOf(s, schemaKit).safeParse(s.default);
  if (!parsed.success) throw new Error(`the default of ${s.env} does not parse`);
  return parsed.data as SettingValues[G][N];
}
