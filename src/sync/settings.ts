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
    bounds: {
      maxListingBytes: config.maxListingBytes,
      maxEntries: config.maxListingEntries,
      maxBytes: config.maxEntryBytes,
      maxDepth: config.maxEntryDepth,
      maxOptionsBytes: config.maxOptionsBytes,
      maxDurationMs: config.maxSyncDurationMs,
      requestDeadlineMs: config.requestDeadlineMs,
    },
  };
}

/**
 * The variables that give a child `sync` process the settings of this `start`: those a flag of
 * `start` may have set, and the upstream (the demo's URL is known only here). Every other setting
 * reaches the child through the environment it inherits.
 */
export function syncEnvFrom(
  config: Config,
  child: { upstreamUrl: string; databasePath: string; target: { headers: Record<string, string> } },
): Record<string, string> {
  return {
    // The URL's credentials travel as the Authorization header of the parsed target; the child
    // parses them again from the URL, whether they came from the environment or --upstream.
    UPSTREAM_URL: withBasicCredentials(child.upstreamUrl, child.target.headers),
    DATABASE_PATH: child.databasePath,
    ...(config.mediaOrigins ? { MEDIA_ORIGINS: config.mediaOrigins.join(',') } : {}),
    SYNC_CONCURRENCY: String(config.concurrency),
    SYNC_MAX_PAGES: String(config.maxPages),
    SYNC_ALLOW_EMPTY: String(config.allowEmpty),
    LOG_LEVEL: config.logLevel,
  };
}

/** `url` with the user and password of a Basic `authorization` header put back into it. */
function withBasicCredentials(url: string, headers: Record<string, string>): string {
  const basic = /^Basic (.+)$/i.exec(headers.authorization ?? '');
  if (!basic?.[1]) return url;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(colon < 0 ? decoded : decoded.slice(0, colon));
  parsed.password = colon < 0 ? '' : encodeURIComponent(decoded.slice(colon + 1));
  return parsed.toString();
}
