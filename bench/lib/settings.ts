import { loadConfig } from '../../src/config.js';
import type { SyncSettings } from '../../src/sync/run-sync.js';
import { syncSettingsFrom } from '../../src/sync/settings.js';

/**
 * What `coworker-mirror sync` runs with when nothing is configured (retries included: a bench that
 * fails on a transient error a real run would retry measures nothing), with a page cap that fits
 * the largest bench listing.
 */
export function benchSyncSettings(upstreamUrl: string, overrides: Partial<SyncSettings> = {}): SyncSettings {
  return { ...syncSettingsFrom(loadConfig({}), upstreamUrl), maxPages: 1_000_000, ...overrides };
}
