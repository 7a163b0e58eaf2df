import type { Config } from '../config.js';
import { outboxSettingsFrom } from '../webhooks/settings.js';
import { mediaSettingsFrom } from '../media/settings.js';
import type { SyncSettings } from './run-sync.js';

/** The run's settings; `target` overrides the configured upstream (the demo's simulated one). */
export function syncSettingsFrom(
  config: Config,
  upstreamUrl: string,
  target: { label: string; headers: Record<string, string> } | null = config.upstream,
): SyncSettings {
  return {
    upstreamUrl,
    ...(target ? { upstreamLabel: target.label, upstreamHeaders: target.headers } : {}),
    concurrency: config.concurrency,
    maxPages: config.maxPages,
    maxCrawlAttempts: config.maxCrawlAttempts,
    allowEmpty: config.allowEmpty,
    requestTimeoutMs: config.requestTimeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
    maxBodyBytes: config.maxBodyBytes,
    maxAttempts: config.maxAttempts,
    maxRetryAfterMs: config.maxRetryAfterMs,
    webhooks: outboxSettingsFrom(config),
    media: mediaSettingsFrom(config),
  };
}
