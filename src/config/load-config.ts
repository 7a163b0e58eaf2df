import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { findUnknownVariables } from './unknown-variables.js';
import { maskUrlCredentials, parseHeaderLine, type UpstreamTarget } from './upstream-target.js';
import {
  bool,
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
import { parseDuration } from '../time/duration.js';

export { maskUrlCredentials, parseDuration };
export type { WebhookEventType } from './values.js';
export type { UpstreamTarget };

/** How a value may appear in an error: a secret only by its length, a URL with its credentials masked. */
type Echo = 'plain' | 'secret' | 'url';

export interface Setting<S extends z.ZodType = z.ZodType> {
  env: string;
  flag: string | null;
  doc: string;
  default: string | null;
  schema: S;
  echo: Echo;
}

function setting<S extends z.ZodType>(
  env: string,
  flag: string | null,
  defaultValue: string | null,
  schema: S,
  doc: string,
  echo: Echo = 'plain',
): Setting<S> {
  return { env, flag, doc, default: defaultValue, schema, echo };
}

/**
 * Every setting by concern, with its environment variable, its flag and its default: the single
 * source of the config schema, the CLI's flags, the README's configuration table (checked by a
 * test) and the unknown-variable check.
 */
export const settings = {
  upstream: {
    url: setting(
      'UPSTREAM_URL',
      '--upstream',
      null,
      upstreamUrl.nullable(),
      'Base URL of the upstream site, or its full list URL. `https://user:pass@host` sends Basic auth. Unset with `start`: the demo (see Demo).',
      'url',
    ),
    token: setting(
      'UPSTREAM_TOKEN',
      null,
      null,
      z.string().min(1).nullable(),
      'Sent as `Authorization: Bearer <token>` on every upstream request.',
      'secret',
    ),
    header: setting(
      'UPSTREAM_HEADER',
      null,
      null,
      headerLine.nullable(),
      'One header sent on every upstream request, e.g. `X-Api-Key: <key>`.',
      'secret',
    ),
    timeoutMs: setting(
      'UPSTREAM_TIMEOUT',
      null,
      '30s',
      duration,
      'Headers and body timeout of one upstream request.',
    ),
    connectTimeoutMs: setting(
      'UPSTREAM_CONNECT_TIMEOUT',
      null,
      '10s',
      duration,
      'Connect timeout of one upstream request.',
    ),
    requestDeadlineMs: setting(
      'UPSTREAM_REQUEST_DEADLINE',
      null,
      '2m',
      duration,
      'Total deadline of one upstream request attempt, headers and whole body (UPSTREAM_TIMEOUT is per chunk).',
    ),
    maxBodyBytes: setting(
      'UPSTREAM_MAX_BODY_BYTES',
      null,
      String(20 * 1024 * 1024),
      int(1024, 1024 ** 3),
      'Largest upstream page body accepted.',
    ),
    maxOptionsBytes: setting(
      'UPSTREAM_MAX_OPTIONS_BYTES',
      null,
      String(64 * 1024),
      int(256, 1024 ** 3),
      'Largest OPTIONS body stored; a larger one is not stored and the previous one is kept.',
    ),
    maxAttempts: setting(
      'UPSTREAM_MAX_ATTEMPTS',
      null,
      '4',
      int(1, 20),
      'Attempts per upstream request (network errors, 5xx, 429).',
    ),
    maxRetryAfterMs: setting(
      'UPSTREAM_MAX_RETRY_AFTER',
      null,
      '2m',
      duration,
      'Longest Retry-After honoured; a longer one fails the run.',
    ),
  },
  database: {
    path: setting(
      'DATABASE_PATH',
      '--db',
      './data/mirror.db',
      z.string().min(1),
      'SQLite database file (created with its folder).',
    ),
  },
  sync: {
    concurrency: setting(
      'SYNC_CONCURRENCY',
      '--concurrency',
      '4',
      int(1, 64),
      'Pages fetched at once after page 1; 1 follows `next` strictly in order.',
    ),
    maxPages: setting(
      'SYNC_MAX_PAGES',
      '--max-pages',
      '50000',
      int(1, 1_000_000),
      'Hard cap on pages per crawl.',
    ),
    maxCrawlAttempts: setting(
      'SYNC_MAX_CRAWL_ATTEMPTS',
      null,
      '3',
      int(1, 20),
      'Whole-crawl attempts when the upstream changes during a crawl.',
    ),
    allowEmpty: setting(
      'SYNC_ALLOW_EMPTY',
      '--allow-empty',
      'false',
      bool,
      'Accept an empty listing at once when the mirror holds entries (otherwise the next run must confirm it).',
    ),
    cron: setting(
      'SYNC_CRON',
      '--cron',
      '*/10 * * * *',
      z.string().min(1),
      'Schedule of `start` (node-cron syntax, seconds field optional).',
    ),
    randomDelayMs: setting(
      'SYNC_RANDOM_DELAY',
      null,
      '0s',
      duration,
      'Random delay up to this before each scheduled run (spreads replicas).',
    ),
    maxListingBytes: setting(
      'SYNC_MAX_LISTING_BYTES',
      null,
      String(256 * 1024 * 1024),
      int(1024, 1024 ** 4),
      'Largest whole listing (sum of page bodies) a run reads; past it the run fails.',
    ),
    maxEntries: setting(
      'SYNC_MAX_ENTRIES',
      null,
      '1000000',
      int(1, 100_000_000),
      'Most entries a listing may hold (its announced `count` and what arrives).',
    ),
    maxEntryBytes: setting(
      'SYNC_MAX_ENTRY_BYTES',
      null,
      String(256 * 1024),
      int(256, 1024 ** 3),
      'Largest single entry (its JSON text); a larger one fails the run naming page, entry and field.',
    ),
    maxEntryDepth: setting(
      'SYNC_MAX_ENTRY_DEPTH',
      null,
      '32',
      int(2, 1000),
      'Deepest nesting of arrays and objects in an entry (a plain entry is 2).',
    ),
    maxDurationMs: setting(
      'SYNC_MAX_DURATION',
      null,
      '15m',
      duration,
      'Total deadline of one run; past it the run fails naming the request that stalled.',
    ),
    maxHeapMb: setting(
      'SYNC_MAX_HEAP_MB',
      null,
      '1024',
      int(64, 65_536),
      'Heap limit (MiB) of the sync process `start` runs each sync in; past it that process dies, not the server.',
    ),
  },
  server: {
    host: setting(
      'HOST',
      '--host',
      '127.0.0.1',
      z.string().min(1),
      'Address the server listens on (0.0.0.0 only when asked).',
    ),
    port: setting('PORT', '--port', '8000', int(0, 65535), 'Port the server listens on.'),
    publicBaseUrl: setting(
      'PUBLIC_BASE_URL',
      '--public-base-url',
      null,
      httpUrl.nullable(),
      'Fixed scheme://host used in next/previous instead of the request Host.',
      'url',
    ),
    trustProxy: setting(
      'TRUST_PROXY',
      '--trust-proxy',
      'false',
      bool,
      'Build next/previous from X-Forwarded-Host and X-Forwarded-Proto.',
    ),
    forwardedAllowIps: setting(
      'FORWARDED_ALLOW_IPS',
      null,
      '127.0.0.1',
      peerList.readonly(),
      'Peers (addresses, CIDRs, `*`) whose X-Forwarded-Proto/-Ssl/-Protocol make links https, as gunicorn.',
    ),
    cacheControl: setting(
      'CACHE_CONTROL',
      null,
      'no-cache',
      cacheControl,
      'Cache-Control of list answers (`none`: no header).',
    ),
    staleAfterMs: setting(
      'STALE_AFTER',
      null,
      '1h',
      duration,
      '/readyz answers 503 when the last successful run is older.',
    ),
    snapshotPollMs: setting(
      'SNAPSHOT_POLL',
      null,
      '1s',
      duration,
      'How often the server looks for a newer snapshot written by another process.',
    ),
    adminToken: setting(
      'ADMIN_TOKEN',
      null,
      null,
      z.string().min(16, 'expected at least 16 characters').nullable(),
      'Enables POST /api/mirror/sync/ with Authorization: Bearer <token>.',
      'secret',
    ),
    metricsToken: setting(
      'METRICS_TOKEN',
      null,
      null,
      z.string().min(16, 'expected at least 16 characters').nullable(),
      'When set, /metrics answers only Authorization: Bearer <token> (401 otherwise).',
      'secret',
    ),
    keepAliveTimeoutMs: setting(
      'KEEP_ALIVE_TIMEOUT',
      null,
      '65s',
      duration,
      "Idle keep-alive of client connections (above a proxy's 60 s idle timeout).",
    ),
    httpRequestTimeoutMs: setting(
      'HTTP_REQUEST_TIMEOUT',
      null,
      '30s',
      duration,
      'Longest a client may take to send a whole request to the server (headers within 10 s at most).',
    ),
    listCacheBytes: setting(
      'LIST_CACHE_BYTES',
      null,
      String(32 * 1024 * 1024),
      int(0, 1024 ** 3),
      "Byte budget of the list endpoint's cache of prepared answers (0: no cache).",
    ),
    asOfCacheBytes: setting(
      'AS_OF_CACHE_BYTES',
      null,
      String(64 * 1024 * 1024),
      int(0, 1024 ** 4),
      'Memory budget of the past snapshots kept for `?as_of=` (0: keep none).',
    ),
  },
  media: {
    origins: setting(
      'MEDIA_ORIGINS',
      null,
      null,
      mediaOrigins.readonly().nullable(),
      'Comma-separated origins (e.g. `https://media.example.com`) whose media each sync mirrors; unset: no media mirrored.',
    ),
    dir: setting(
      'MEDIA_DIR',
      null,
      null,
      z.string().min(1).nullable(),
      'Folder of the mirrored media files (unset: `media/` beside the database file).',
    ),
    maxBytes: setting(
      'MEDIA_MAX_BYTES',
      null,
      String(50 * 1024 * 1024),
      int(1, 1024 ** 4),
      'Largest media file accepted; a larger one is recorded as failed.',
    ),
    runMaxBytes: setting(
      'MEDIA_RUN_MAX_BYTES',
      null,
      String(2 * 1024 ** 3),
      int(1, 1024 ** 5),
      'Media bytes one run may download in total; files past the budget wait for the next run.',
    ),
    concurrency: setting('MEDIA_CONCURRENCY', null, '4', int(1, 64), 'Media downloads at once.'),
    timeoutMs: setting(
      'MEDIA_TIMEOUT',
      null,
      '60s',
      duration,
      'Total deadline of one media request, connect to last byte.',
    ),
    retentionMs: setting(
      'MEDIA_RETENTION',
      null,
      null,
      duration.nullable(),
      'Drop files no media version valid within this window references (unset: keep all).',
    ),
    rewrite: setting(
      'MEDIA_REWRITE',
      null,
      'false',
      bool,
      "List endpoint (and `?as_of=`) serves the mirror's media URLs in place of the upstream's.",
    ),
  },
  webhooks: {
    urls: setting(
      'WEBHOOK_URLS',
      null,
      null,
      webhookUrlList.readonly(),
      'Comma-separated endpoints notified of changes and failures (unset: no webhooks).',
    ),
    secret: setting(
      'WEBHOOK_SECRET',
      null,
      null,
      webhookSecret.nullable(),
      'Standard Webhooks signing secret, `whsec_` + base64 of 24 to 64 bytes (unset: unsigned POSTs, e.g. deploy hooks).',
      'secret',
    ),
    events: setting(
      'WEBHOOK_EVENTS',
      null,
      webhookEventTypes.join(','),
      webhookEventList.readonly(),
      'Event types sent (comma-separated).',
    ),
    failureThreshold: setting(
      'WEBHOOK_FAILURE_THRESHOLD',
      null,
      '3',
      int(1, 1000),
      'Consecutive failed runs that send `sync.failed`.',
    ),
    retryScheduleMs: setting(
      'WEBHOOK_RETRY_SCHEDULE',
      null,
      '5s,5m,30m,2h,5h,10h,10h',
      durationList.readonly(),
      'Delays before each retry (jittered ±20 %); after the last, the delivery has failed.',
    ),
    timeoutMs: setting(
      'WEBHOOK_TIMEOUT',
      null,
      '15s',
      duration,
      "Total deadline of one delivery attempt (connect, headers and the answer's first KB).",
    ),
  },
  demo: {
    enabled: setting(
      'DEMO',
      null,
      'false',
      bool,
      'Run `start` against the built-in simulated upstream on purpose (needed with `NODE_ENV=production`).',
    ),
    mutateEveryMs: setting(
      'DEMO_MUTATE_EVERY',
      null,
      '2m',
      duration,
      'Demo only: how often the simulated upstream changes its data.',
    ),
    port: setting(
      'DEMO_UPSTREAM_PORT',
      null,
      '8766',
      int(0, 65535),
      'Demo only: port of the simulated upstream; its media host listens on the next port (0: any free ports).',
    ),
  },
  log: {
    level: setting(
      'LOG_LEVEL',
      '--log-level',
      'info',
      z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      'pino log level.',
    ),
  },
} as const;

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

type GroupShape<G> = { [K in keyof G]: G[K] extends Setting<infer S> ? S : never };

/** The nested schema, built from the table: one z.object per concern, one leaf per setting. */
const configSchema = z.object(
  Object.fromEntries(
    Object.entries(settings).map(([group, leaves]) => [
      group,
      z.object(
        Object.fromEntries(Object.entries(leaves).map(([name, s]: [string, Setting]) => [name, s.schema])),
      ),
    ]),
  ),
) as unknown as z.ZodObject<{ [G in keyof Settings]: z.ZodObject<GroupShape<Settings[G]>> }>;

export type SettingValues = z.output<typeof configSchema>;

/** Flag values by setting key, as commander gives them (strings, or booleans for switches). */
export type FlagValues = Partial<Record<SettingKey, string | boolean | undefined>>;

/** Variables read outside the settings table; known, so never reported as typos. */
const OTHER_KNOWN_VARIABLES = ['NODE_ENV', 'NO_COLOR', 'FORCE_COLOR', 'TZ'];

interface Issue {
  name: string;
  problem: string;
}

/** The text each setting is parsed from (a flag beats its variable, an empty variable is unset). */
interface RawSettings {
  input: Record<string, Record<string, string | null>>;
  /** What an error calls each setting: the flag when a flag gave it, else the variable. */
  names: Map<SettingKey, string>;
  explicit: Set<SettingKey>;
}

function rawSettings(env: Readonly<Record<string, string | undefined>>, flags: FlagValues): RawSettings {
  const raw: RawSettings = { input: {}, names: new Map(), explicit: new Set() };
  for (const s of settingList) {
    const flag = flags[s.key];
    const fromFlag = flag !== undefined;
    const fromEnv = !fromFlag && env[s.env] !== undefined && env[s.env] !== '';
    (raw.input[s.group] ??= {})[s.name] = fromFlag
      ? String(flag)
      : fromEnv
        ? (env[s.env] ?? null)
        : s.default;
    if (fromFlag || fromEnv) raw.explicit.add(s.key);
    raw.names.set(s.key, fromFlag && s.flag ? s.flag : s.env);
  }
  return raw;
}

function shown(s: Setting, raw: string | null | undefined): string {
  if (raw === null || raw === undefined) return 'nothing';
  if (s.echo === 'secret') return `${raw.length} characters, not shown`;
  return JSON.stringify(s.echo === 'url' ? maskUrlCredentials(raw) : raw);
}

/** zod's issues, one per offending setting, in table order, named and with what was given. */
function issuesOf(error: z.ZodError, raw: RawSettings): Issue[] {
  const problems = new Map<string, string[]>();
  for (const issue of error.issues) {
    const key = issue.path.slice(0, 2).join('.');
    problems.set(key, [...(problems.get(key) ?? []), issue.message]);
  }
  const named = settingList.flatMap((s) => {
    const found = problems.get(s.key);
    if (!found) return [];
    problems.delete(s.key);
    const given = shown(s, raw.input[s.group]?.[s.name]);
    return [{ name: raw.names.get(s.key) ?? s.env, problem: `${found.join('; ')} (got ${given})` }];
  });
  // Only the table's leaves can be wrong, but an issue elsewhere must not vanish from the error.
  return [...named, ...[...problems].map(([key, found]) => ({ name: key, problem: found.join('; ') }))];
}

/**
 * Parses the environment and flags once (a flag beats its variable); throws ConfigError naming every
 * offending variable or flag and what it expects, never echoing a secret.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, flags: FlagValues = {}) {
  const raw = rawSettings(env, flags);
  const parsed = configSchema.safeParse(raw.input);
  if (!parsed.success) throw new ConfigError(issuesOf(parsed.error, raw));
  const issues: Issue[] = [];
  const config = derive(parsed.data, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    ...config,
    /** Settings given by a variable or a flag rather than defaulted. */
    explicit: raw.explicit as ReadonlySet<SettingKey>,
    /** `NODE_ENV=production`: `start` then refuses to fall back to the demo. */
    production: env.NODE_ENV === 'production',
    /** Unknown variables that look like misspelt settings; the CLI warns about each. */
    unknownVariables: findUnknownVariables(env, {
      known: [...settingList.map((s) => s.env), ...OTHER_KNOWN_VARIABLES],
      ownedPrefixes: [...new Set(settingList.map((s) => `${s.env.split('_', 1)[0]}_`))].filter(
        (p) => settingList.filter((s) => s.env.startsWith(p)).length > 1,
      ),
    }),
  };
}

/**
 * What the settings imply together, worked out once so no caller re-derives it: the upstream target
 * (its URL, masked label and auth headers, in place of the URL, token and header it comes from; null
 * when none is named: the demo) and the media folder (MEDIA_DIR, else `media/` beside the database).
 */
function derive(values: SettingValues, issues: Issue[]) {
  const { url, token, header, ...upstream } = values.upstream;
  const target = url ? upstreamTarget(url, token, header, issues) : null;
  if (values.demo.enabled && target) {
    issues.push({
      name: 'DEMO',
      problem: 'DEMO=1 runs the built-in simulated upstream, but UPSTREAM_URL is set too: unset one of them',
    });
  }
  return {
    ...values,
    upstream: { ...upstream, target },
    media: { ...values.media, dir: values.media.dir ?? join(dirname(values.database.path), 'media') },
  };
}

/** The parsed configuration, nested by concern (`config.sync`, `config.server`, …). */
export type Config = ReturnType<typeof loadConfig>;
export type UpstreamConfig = Config['upstream'];
export type ServerConfig = Config['server'];
export type MediaConfig = Config['media'];
export type WebhooksConfig = Config['webhooks'];
/** The upstream group with a target named: what a run needs (`sync` refuses to start without one). */
export type NamedUpstream = UpstreamConfig & { target: UpstreamTarget };

/** Gathers the URL's credentials, the token and the header; two sources of Authorization is an error. */
function upstreamTarget(
  url: NonNullable<SettingValues['upstream']['url']>,
  token: string | null,
  headerText: string | null,
  issues: Issue[],
): UpstreamTarget {
  const headers: Record<string, string> = {};
  const sources: string[] = [];
  if (url.basicAuth) {
    headers.authorization = url.basicAuth;
    sources.push('the user:password in UPSTREAM_URL');
  }
  if (token) {
    headers.authorization = `Bearer ${token}`;
    sources.push('UPSTREAM_TOKEN');
  }
  const header = headerText ? parseHeaderLine(headerText) : null;
  if (header) {
    if (header[0] === 'authorization') sources.push('UPSTREAM_HEADER');
    headers[header[0]] = header[1];
  }
  if (sources.length > 1) {
    issues.push({
      name: 'UPSTREAM_TOKEN / UPSTREAM_HEADER',
      problem: `only one Authorization can be sent, but ${sources.join(' and ')} each set one: keep one`,
    });
  }
  return {
    url: url.url,
    label: url.label,
    headers,
    ...(url.basicAuth !== null ? { credentialsInUrl: true } : {}),
  };
}
