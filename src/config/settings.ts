import { z } from 'zod';
import {
  bool,
  share,
  cacheControl,
  duration,
  durationList,
  headerLine,
  httpUrl,
  int,
  mediaOrigins,
  peerList,
  upstreamUrl,
  webhookEventList,
  webhookEventTypes,
  webhookSecret,
  webhookUrlList,
} from './values.js';
import { notifyDigest, notifyEventList, notifyEventTypes, notifyTargetList } from '../notify/targets.js';

/** How a value may appear in an error: a secret only by its length, a URL with its credentials masked. */
export type Echo = 'plain' | 'secret' | 'url';

export interface Setting<S extends z.ZodType = z.ZodType> {
  env: string;
  flag: string | null;
  doc: string;
  default: string | null;
  schema: S;
  echo: Echo;
}

/**
 * Every setting by concern, with its environment variable, its flag and its default: the single
 * source of the config schema, the CLI's flags, the README's configuration table (checked by a
 * test) and the unknown-variable check.
 */
export const settings = {
  upstream: {
    url: {
      env: 'UPSTREAM_URL',
      flag: '--upstream',
      default: null,
      schema: upstreamUrl.nullable(),
      doc: 'Base URL of the upstream site, or its full list URL. `https://user:pass@host` sends Basic auth. Unset with `start`: the demo (see Demo).',
      echo: 'url',
    },
    token: {
      env: 'UPSTREAM_TOKEN',
      flag: null,
      default: null,
      schema: z.string().min(1).nullable(),
      doc: 'Sent as `Authorization: Bearer <token>` on every upstream request.',
      echo: 'secret',
    },
    header: {
      env: 'UPSTREAM_HEADER',
      flag: null,
      default: null,
      schema: headerLine.nullable(),
      doc: 'One header sent on every upstream request, e.g. `X-Api-Key: <key>`.',
      echo: 'secret',
    },
    timeoutMs: {
      env: 'UPSTREAM_TIMEOUT',
      flag: null,
      default: '30s',
      schema: duration,
      doc: 'Headers and body timeout of one upstream request.',
      echo: 'plain',
    },
    connectTimeoutMs: {
      env: 'UPSTREAM_CONNECT_TIMEOUT',
      flag: null,
      default: '10s',
      schema: duration,
      doc: 'Connect timeout of one upstream request.',
      echo: 'plain',
    },
    requestDeadlineMs: {
      env: 'UPSTREAM_REQUEST_DEADLINE',
      flag: null,
      default: '2m',
      schema: duration,
      doc: 'Total deadline of one upstream request attempt, headers and whole body (UPSTREAM_TIMEOUT is per chunk).',
      echo: 'plain',
    },
    maxBodyBytes: {
      env: 'UPSTREAM_MAX_BODY_BYTES',
      flag: null,
      default: String(20 * 1024 * 1024),
      schema: int(1024, 1024 ** 3),
      doc: 'Largest upstream page body accepted.',
      echo: 'plain',
    },
    maxOptionsBytes: {
      env: 'UPSTREAM_MAX_OPTIONS_BYTES',
      flag: null,
      default: String(64 * 1024),
      schema: int(256, 1024 ** 3),
      doc: 'Largest OPTIONS body stored; a larger one is not stored and the previous one is kept.',
      echo: 'plain',
    },
    maxAttempts: {
      env: 'UPSTREAM_MAX_ATTEMPTS',
      flag: null,
      default: '4',
      schema: int(1, 20),
      doc: 'Attempts per upstream request (network errors, 5xx, 429).',
      echo: 'plain',
    },
    maxRetryAfterMs: {
      env: 'UPSTREAM_MAX_RETRY_AFTER',
      flag: null,
      default: '2m',
      schema: duration,
      doc: 'Longest Retry-After honoured; a longer one fails the run.',
      echo: 'plain',
    },
  },
  database: {
    path: {
      env: 'DATABASE_PATH',
      flag: '--db',
      default: './data/mirror.db',
      schema: z.string().min(1),
      doc: 'SQLite database file (created with its folder).',
      echo: 'plain',
    },
  },
  sync: {
    concurrency: {
      env: 'SYNC_CONCURRENCY',
      flag: '--concurrency',
      default: '4',
      schema: int(1, 64),
      doc: 'Pages fetched at once after page 1; 1 follows `next` strictly in order.',
      echo: 'plain',
    },
    maxPages: {
      env: 'SYNC_MAX_PAGES',
      flag: '--max-pages',
      default: '50000',
      schema: int(1, 1_000_000),
      doc: 'Hard cap on pages per crawl.',
      echo: 'plain',
    },
    maxCrawlAttempts: {
      env: 'SYNC_MAX_CRAWL_ATTEMPTS',
      flag: null,
      default: '3',
      schema: int(1, 20),
      doc: 'Whole-crawl attempts when the upstream changes during a crawl.',
      echo: 'plain',
    },
    allowEmpty: {
      env: 'SYNC_ALLOW_EMPTY',
      flag: '--allow-empty',
      default: 'false',
      schema: bool,
      doc: 'Accept an empty listing at once when the mirror holds entries (otherwise the next run must confirm it).',
      echo: 'plain',
    },
    confirmDrop: {
      env: 'SYNC_CONFIRM_DROP',
      flag: '--confirm-drop',
      default: '0.5',
      schema: share,
      doc: 'A run that would remove more than this share of the held entries (0 to 1, or 50%; 3 entries at least) is held until the next run sees the same; 0 turns the hold off.',
      echo: 'plain',
    },
    cron: {
      env: 'SYNC_CRON',
      flag: '--cron',
      default: '*/10 * * * *',
      schema: z.string().min(1),
      doc: 'Schedule of `start` (node-cron syntax, seconds field optional).',
      echo: 'plain',
    },
    randomDelayMs: {
      env: 'SYNC_RANDOM_DELAY',
      flag: null,
      default: '0s',
      schema: duration,
      doc: 'Random delay up to this before each scheduled run (spreads replicas).',
      echo: 'plain',
    },
    maxListingBytes: {
      env: 'SYNC_MAX_LISTING_BYTES',
      flag: null,
      default: String(256 * 1024 * 1024),
      schema: int(1024, 1024 ** 4),
      doc: 'Largest whole listing (sum of page bodies) a run reads; past it the run fails.',
      echo: 'plain',
    },
    maxEntries: {
      env: 'SYNC_MAX_ENTRIES',
      flag: null,
      default: '1000000',
      schema: int(1, 100_000_000),
      doc: 'Most entries a listing may hold (its announced `count` and what arrives).',
      echo: 'plain',
    },
    maxEntryBytes: {
      env: 'SYNC_MAX_ENTRY_BYTES',
      flag: null,
      default: String(256 * 1024),
      schema: int(256, 1024 ** 3),
      doc: 'Largest single entry (its JSON text); a larger one fails the run naming page, entry and field.',
      echo: 'plain',
    },
    maxEntryDepth: {
      env: 'SYNC_MAX_ENTRY_DEPTH',
      flag: null,
      default: '32',
      schema: int(2, 1000),
      doc: 'Deepest nesting of arrays and objects in an entry (a plain entry is 2).',
      echo: 'plain',
    },
    maxDurationMs: {
      env: 'SYNC_MAX_DURATION',
      flag: null,
      default: '15m',
      schema: duration,
      doc: 'Total deadline of one run; past it the run fails naming the request that stalled.',
      echo: 'plain',
    },
    maxHeapMb: {
      env: 'SYNC_MAX_HEAP_MB',
      flag: null,
      default: '1024',
      schema: int(64, 65_536),
      doc: 'Heap limit (MiB) of the sync process `start` runs each sync in; past it that process dies, not the server.',
      echo: 'plain',
    },
  },
  server: {
    host: {
      env: 'HOST',
      flag: '--host',
      default: '127.0.0.1',
      schema: z.string().min(1),
      doc: 'Address the server listens on (0.0.0.0 only when asked).',
      echo: 'plain',
    },
    port: {
      env: 'PORT',
      flag: '--port',
      default: '8000',
      schema: int(0, 65535),
      doc: 'Port the server listens on.',
      echo: 'plain',
    },
    publicBaseUrl: {
      env: 'PUBLIC_BASE_URL',
      flag: '--public-base-url',
      default: null,
      schema: httpUrl.nullable(),
      doc: 'Fixed scheme://host used in next/previous instead of the request Host.',
      echo: 'url',
    },
    trustProxy: {
      env: 'TRUST_PROXY',
      flag: '--trust-proxy',
      default: 'false',
      schema: bool,
      doc: 'Build next/previous from X-Forwarded-Host and X-Forwarded-Proto.',
      echo: 'plain',
    },
    forwardedAllowIps: {
      env: 'FORWARDED_ALLOW_IPS',
      flag: null,
      default: '127.0.0.1',
      schema: peerList.readonly(),
      doc: 'Peers (addresses, CIDRs, `*`) whose X-Forwarded-Proto/-Ssl/-Protocol make links https, as gunicorn.',
      echo: 'plain',
    },
    cacheControl: {
      env: 'CACHE_CONTROL',
      flag: null,
      default: 'no-cache',
      schema: cacheControl,
      doc: 'Cache-Control of list answers (`none`: no header).',
      echo: 'plain',
    },
    staleAfterMs: {
      env: 'STALE_AFTER',
      flag: null,
      default: '1h',
      schema: duration,
      doc: '/readyz answers 503 when the last successful run is older.',
      echo: 'plain',
    },
    snapshotPollMs: {
      env: 'SNAPSHOT_POLL',
      flag: null,
      default: '1s',
      schema: duration,
      doc: 'How often the server looks for a newer snapshot written by another process.',
      echo: 'plain',
    },
    adminToken: {
      env: 'ADMIN_TOKEN',
      flag: null,
      default: null,
      schema: z.string().min(16, 'expected at least 16 characters').nullable(),
      doc: 'Enables POST /api/mirror/sync/ with Authorization: Bearer <token>.',
      echo: 'secret',
    },
    metricsToken: {
      env: 'METRICS_TOKEN',
      flag: null,
      default: null,
      schema: z.string().min(16, 'expected at least 16 characters').nullable(),
      doc: 'When set, /metrics answers only Authorization: Bearer <token> (401 otherwise).',
      echo: 'secret',
    },
    keepAliveTimeoutMs: {
      env: 'KEEP_ALIVE_TIMEOUT',
      flag: null,
      default: '65s',
      schema: duration,
      doc: "Idle keep-alive of client connections (above a proxy's 60 s idle timeout).",
      echo: 'plain',
    },
    httpRequestTimeoutMs: {
      env: 'HTTP_REQUEST_TIMEOUT',
      flag: null,
      default: '30s',
      schema: duration,
      doc: 'Longest a client may take to send a whole request to the server (headers within 10 s at most).',
      echo: 'plain',
    },
    listCacheBytes: {
      env: 'LIST_CACHE_BYTES',
      flag: null,
      default: String(32 * 1024 * 1024),
      schema: int(0, 1024 ** 3),
      doc: "Byte budget of the list endpoint's cache of prepared answers (0: no cache).",
      echo: 'plain',
    },
    asOfCacheBytes: {
      env: 'AS_OF_CACHE_BYTES',
      flag: null,
      default: String(64 * 1024 * 1024),
      schema: int(0, 1024 ** 4),
      doc: 'Memory budget of the past snapshots kept for `?as_of=` (0: keep none).',
      echo: 'plain',
    },
  },
  media: {
    origins: {
      env: 'MEDIA_ORIGINS',
      flag: null,
      default: null,
      schema: mediaOrigins.readonly().nullable(),
      doc: 'Comma-separated origins (e.g. `https://media.example.com`) whose media each sync mirrors; unset: no media mirrored.',
      echo: 'plain',
    },
    dir: {
      env: 'MEDIA_DIR',
      flag: null,
      default: null,
      schema: z.string().min(1).nullable(),
      doc: 'Folder of the mirrored media files (unset: `media/` beside the database file).',
      echo: 'plain',
    },
    maxBytes: {
      env: 'MEDIA_MAX_BYTES',
      flag: null,
      default: String(50 * 1024 * 1024),
      schema: int(1, 1024 ** 4),
      doc: 'Largest media file accepted; a larger one is recorded as failed.',
      echo: 'plain',
    },
    runMaxBytes: {
      env: 'MEDIA_RUN_MAX_BYTES',
      flag: null,
      default: String(2 * 1024 ** 3),
      schema: int(1, 1024 ** 5),
      doc: 'Media bytes one run may download in total; files past the budget wait for the next run.',
      echo: 'plain',
    },
    concurrency: {
      env: 'MEDIA_CONCURRENCY',
      flag: null,
      default: '4',
      schema: int(1, 64),
      doc: 'Media downloads at once.',
      echo: 'plain',
    },
    timeoutMs: {
      env: 'MEDIA_TIMEOUT',
      flag: null,
      default: '60s',
      schema: duration,
      doc: 'Total deadline of one media request, connect to last byte.',
      echo: 'plain',
    },
    retentionMs: {
      env: 'MEDIA_RETENTION',
      flag: null,
      default: null,
      schema: duration.nullable(),
      doc: 'Drop files no media version valid within this window references (unset: keep all).',
      echo: 'plain',
    },
    rewrite: {
      env: 'MEDIA_REWRITE',
      flag: null,
      default: 'false',
      schema: bool,
      doc: "List endpoint (and `?as_of=`) serves the mirror's media URLs in place of the upstream's.",
      echo: 'plain',
    },
  },
  webhooks: {
    urls: {
      env: 'WEBHOOK_URLS',
      flag: null,
      default: null,
      schema: webhookUrlList.readonly(),
      doc: 'Comma-separated endpoints notified of changes and failures (unset: no webhooks).',
      echo: 'plain',
    },
    secret: {
      env: 'WEBHOOK_SECRET',
      flag: null,
      default: null,
      schema: webhookSecret.nullable(),
      doc: 'Standard Webhooks signing secret, `whsec_` + base64 of 24 to 64 bytes (unset: unsigned POSTs, e.g. deploy hooks).',
      echo: 'secret',
    },
    events: {
      env: 'WEBHOOK_EVENTS',
      flag: null,
      default: webhookEventTypes.join(','),
      schema: webhookEventList.readonly(),
      doc: 'Event types sent (comma-separated).',
      echo: 'plain',
    },
    failureThreshold: {
      env: 'WEBHOOK_FAILURE_THRESHOLD',
      flag: null,
      default: '3',
      schema: int(1, 1000),
      doc: 'Consecutive failed runs that send `sync.failed`.',
      echo: 'plain',
    },
    retryScheduleMs: {
      env: 'WEBHOOK_RETRY_SCHEDULE',
      flag: null,
      default: '5s,5m,30m,2h,5h,10h,10h',
      schema: durationList.readonly(),
      doc: 'Delays before each retry (jittered ±20 %); after the last, the delivery has failed.',
      echo: 'plain',
    },
    timeoutMs: {
      env: 'WEBHOOK_TIMEOUT',
      flag: null,
      default: '15s',
      schema: duration,
      doc: "Total deadline of one delivery attempt (connect, headers and the answer's first KB).",
      echo: 'plain',
    },
  },
  notify: {
    urls: {
      env: 'NOTIFY_URLS',
      flag: null,
      default: null,
      schema: notifyTargetList.readonly(),
      doc: 'Comma-separated chat and e-mail targets told of changes in words: `slack+https://…`, `discord+https://…`, `teams+https://…`, `gchat+https://…`, `mattermost+https://…`, `ntfy+https://ntfy.sh/<topic>`, `smtp(s)://user:pass@host:587/?from=…&to=a@x,b@y` (unset: none).',
      echo: 'secret',
    },
    events: {
      env: 'NOTIFY_EVENTS',
      flag: null,
      default: notifyEventTypes.join(','),
      schema: notifyEventList.readonly(),
      doc: 'What people are told of (comma-separated).',
      echo: 'plain',
    },
    digest: {
      env: 'NOTIFY_DIGEST',
      flag: null,
      default: 'run',
      schema: notifyDigest,
      doc: 'One message per run with changes (`run`), or one per `hourly` / `daily` / `daily@HH:MM` digest in `TZ`.',
      echo: 'plain',
    },
    timeoutMs: {
      env: 'NOTIFY_TIMEOUT',
      flag: null,
      default: '15s',
      schema: duration,
      doc: 'Total deadline of one message delivery attempt (chat POST or SMTP session).',
      echo: 'plain',
    },
  },
  demo: {
    enabled: {
      env: 'DEMO',
      flag: null,
      default: 'false',
      schema: bool,
      doc: 'Run `start` against the built-in simulated upstream on purpose (needed with `NODE_ENV=production`).',
      echo: 'plain',
    },
    mutateEveryMs: {
      env: 'DEMO_MUTATE_EVERY',
      flag: null,
      default: '2m',
      schema: duration,
      doc: 'Demo only: how often the simulated upstream changes its data.',
      echo: 'plain',
    },
    port: {
      env: 'DEMO_UPSTREAM_PORT',
      flag: null,
      default: '8766',
      schema: int(0, 65535),
      doc: 'Demo only: port of the simulated upstream; its media host listens on the next port (0: any free ports).',
      echo: 'plain',
    },
  },
  log: {
    level: {
      env: 'LOG_LEVEL',
      flag: '--log-level',
      default: 'info',
      schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      doc: 'pino log level.',
      echo: 'plain',
    },
  },
} as const satisfies Record<string, Record<string, Setting>>;

export type Settings = typeof settings;
/** A setting's group and name, e.g. `sync.concurrency`. */
export type SettingKey = {
  [G in keyof Settings]: `${G}.${keyof Settings[G] & string}`;
}[keyof Settings];

/** A setting of the table with where it sits: its group, its name in it, and both as its key. */
export type ListedSetting = Setting & { key: SettingKey; group: string; name: string };

/** Every setting, in table order. */
export const settingList: readonly ListedSetting[] = Object.entries(settings).flatMap(([group, leaves]) =>
  Object.entries(leaves).map(([name, s]: [string, Setting]) => ({
    ...s,
    key: `${group}.${name}` as SettingKey,
    group,
    name,
  })),
);

const settingsByKey = new Map(settingList.map((s) => [s.key, s]));

/** The table's entry of one setting. */
export function settingOf(key: SettingKey): ListedSetting {
  const found = settingsByKey.get(key);
  if (!found) throw new Error(`no setting ${key}`);
  return found;
}

type OutputOf<T> = T extends Setting<infer S> ? z.output<S> : never;

/**
 * A setting's default as the value it parses to: where a module that can run without a Config
 * (the upstream client, the crawl, the snapshot holder) takes its defaults, so none is restated.
 */
export function defaultOf<G extends keyof Settings, N extends keyof Settings[G] & string>(
  group: G,
  name: N,
): OutputOf<Settings[G][N]> {
  const s = (settings[group] as Record<string, Setting>)[name];
  if (!s) throw new Error(`no setting ${group}.${name}`);
  return s.schema.parse(s.default) as OutputOf<Settings[G][N]>;
}

/**
 * Entries per page of the upstream's contract: what a run that could not observe the page size
 * (a one-page listing, a run stored before page sizes were) is served with. Not a variable: the
 * upstream decides it.
 */
export const CONTRACT_PAGE_SIZE = 8;
