import { z } from 'zod';
import {
  bool,
  share,
  cacheControl,
  databasePath,
  databasePoolMax,
  databaseTimeout,
  databaseUrlText,
  duration,
  durationList,
  headerLine,
  httpUrl,
  int,
  mediaOrigins,
  peerList,
  upstreamUrl,
  webhookEventList,
  webhookSecret,
  webhookUrlList,
} from './values.js';
import { notifyDigest, notifyEventList, notifyTargetList } from '../notify/targets.js';
import { settings, type Settings } from './setting-table.js';
import { SYNC_HEAP_MAX_MB, SYNC_HEAP_MIN_MB } from './sync-heap.js';

// The table's names stay importable from here, where callers found them before the split.
export { CONTRACT_PAGE_SIZE, settingList, settingOf, settings } from './setting-table.js';
export type { Echo, ListedSetting, Setting, SettingKey, Settings } from './setting-table.js';

/** A zod schema for every setting of the table, and for nothing else. */
type SchemaTable = { [G in keyof Settings]: { [N in keyof Settings[G]]: z.ZodType } };

/**
 * How each setting's text is parsed, by the table's group and name (setting-table.ts says what each
 * setting is). Only the config's loader and `defaultOf` build them: a read command's config parses
 * its database settings with the plain parsers these wrap (load-store-config.ts).
 */
export const settingSchemas = {
  upstream: {
    url: upstreamUrl.nullable(),
    token: z.string().min(1).nullable(),
    header: headerLine.nullable(),
    timeoutMs: duration,
    connectTimeoutMs: duration,
    requestDeadlineMs: duration,
    maxBodyBytes: int(1024, 1024 ** 3),
    maxOptionsBytes: int(256, 1024 ** 3),
    maxAttempts: int(1, 20),
    maxRetryAfterMs: duration,
  },
  database: {
    path: databasePath,
    url: databaseUrlText.nullable(),
    poolMax: databasePoolMax,
    probeTimeoutMs: databaseTimeout,
    readTimeoutMs: databaseTimeout,
    syncLockTimeoutMs: databaseTimeout,
    syncStatementTimeoutMs: databaseTimeout,
  },
  sync: {
    concurrency: int(1, 64),
    maxPages: int(1, 100_000_000),
    maxCrawlAttempts: int(1, 20),
    allowEmpty: bool,
    confirmDrop: share,
    confirmDropAfterMs: duration,
    cron: z.string().min(1),
    randomDelayMs: duration,
    maxListingBytes: int(1024, 1024 ** 4),
    maxEntries: int(1, 100_000_000),
    maxEntryBytes: int(256, 1024 ** 3),
    maxEntryDepth: int(2, 1000),
    maxDurationMs: duration,
    maxHeapMb: int(SYNC_HEAP_MIN_MB, SYNC_HEAP_MAX_MB),
  },
  server: {
    host: z.string().min(1),
    port: int(0, 65535),
    internalPort: int(0, 65535).nullable(),
    internalHost: z.string().min(1),
    internalBaseUrl: httpUrl.nullable(),
    publicBaseUrl: httpUrl.nullable(),
    trustProxy: bool,
    forwardedAllowIps: peerList.readonly(),
    cacheControl: cacheControl,
    staleAfterMs: duration,
    snapshotPollMs: duration,
    adminToken: z.string().min(16, 'expected at least 16 characters').nullable(),
    metricsToken: z.string().min(16, 'expected at least 16 characters').nullable(),
    keepAliveTimeoutMs: duration,
    httpRequestTimeoutMs: duration,
    listCacheBytes: int(0, 1024 ** 3),
    asOfCacheBytes: int(0, 1024 ** 4),
  },
  media: {
    origins: mediaOrigins.readonly().nullable(),
    dir: z.string().min(1).nullable(),
    maxBytes: int(1, 1024 ** 4),
    runMaxBytes: int(1, 1024 ** 5),
    concurrency: int(1, 64),
    timeoutMs: duration,
    retentionMs: duration.nullable(),
    rewrite: bool,
  },
  prune: {
    removedAfterMs: duration.nullable(),
    olderThanMs: duration.nullable(),
  },
  webhooks: {
    urls: webhookUrlList.readonly(),
    secret: webhookSecret.nullable(),
    events: webhookEventList.readonly(),
    failureThreshold: int(1, 1000),
    retryScheduleMs: durationList.readonly(),
    timeoutMs: duration,
  },
  notify: {
    urls: notifyTargetList.readonly(),
    events: notifyEventList.readonly(),
    digest: notifyDigest,
    timeoutMs: duration,
    sendTimeoutMs: duration,
  },
  demo: {
    enabled: bool,
    mutateEveryMs: duration,
    port: int(0, 65535),
  },
  log: {
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  },
} as const satisfies SchemaTable;

export type SettingSchemas = typeof settingSchemas;

/**
 * A setting's default as the value it parses to: where a module that can run without a Config
 * (the upstream client, the crawl, the snapshot holder) takes its defaults, so none is restated.
 */
export function defaultOf<
  G extends keyof Settings,
  N extends keyof Settings[G] & keyof SettingSchemas[G] & string,
>(group: G, name: N): z.output<SettingSchemas[G][N]> {
  const schema = (settingSchemas[group] as Record<string, z.ZodType>)[name];
  const text = (settings[group] as Record<string, { default: string | null }>)[name]?.default;
  if (!schema || text === undefined) throw new Error(`no setting ${group}.${name}`);
  return schema.parse(text) as z.output<SettingSchemas[G][N]>;
}
