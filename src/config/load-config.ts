import { loadSettings, type Config } from './load-settings.js';
import type { FlagValues } from './raw-settings.js';
import { schemaKit } from './schema-kit.js';
import { maskUrlCredentials, type UpstreamTarget } from './upstream-target.js';
import { parseDuration } from '../time/duration.js';

export { maskUrlCredentials, parseDuration };
export type { WebhookEventType } from './webhook-events.js';
export type { UpstreamTarget };
export type { FlagValues } from './raw-settings.js';
// The table's names stay importable from the loader, where callers found them before the split.
export { settingList, settingOf, settings } from './setting-table.js';
export type { Echo, ListedSetting, Setting, SettingKey, Settings } from './setting-table.js';
export type { SettingValues } from './setting-values.js';
export type { Config };

/**
 * Every setting, by the one loader (`loadSettings`) with zod's kit: the config of every command but
 * those that only read the store. Importing this module loads zod; load-settings.ts alone does not.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  flags: FlagValues = {},
): Config {
  return loadSettings(env, flags, { kit: schemaKit });
}

export type UpstreamConfig = Config['upstream'];
export type ServerConfig = Config['server'];
export type MediaConfig = Config['media'];
export type WebhooksConfig = Config['webhooks'];
/** The upstream group with a target named: what a run needs (`sync` refuses to start without one). */
export type NamedUpstream = UpstreamConfig & { target: UpstreamTarget };
