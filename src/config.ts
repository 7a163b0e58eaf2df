import { isIP } from 'node:net';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { findUnknownVariables, type UnknownVariable } from './config/unknown-variables.js';
import {
  maskUrlCredentials,
  parseHeaderLine,
  parseUpstreamUrl,
  type UpstreamTarget,
} from './config/upstream-target.js';
import { parseDuration } from './time/duration.js';

export { maskUrlCredentials };

export { parseDuration };

const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: 'expected a duration like 30s, 10m, 12h, 7d or milliseconds' });
    return z.NEVER;
  }
  return ms;
});

const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\s*\d+\s*$/, `expected a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `expected at least ${min}`).max(max, `expected at most ${max}`));

const bool = z
  .string()
  .regex(/^(1|0|true|false|yes|no|on|off)$/i, 'expected true or false')
  .transform((v) => /^(1|true|yes|on)$/i.test(v));

const httpUrl = z
  .string()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'expected an absolute http(s) URL')
  .transform((v) => v.replace(/\/+$/, ''));

/** Event types a webhook can carry; WEBHOOK_EVENTS filters them. */
export const webhookEventTypes = ['coworkers.changed', 'sync.failed', 'sync.recovered'] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

const commaList = (text: string): string[] =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

const webhookUrlList = z
  .string()
  .nullable()
  .transform((text, ctx) => {
    const urls = text === null ? [] : commaList(text);
    for (const url of urls) {
      if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
        ctx.addIssue({ code: 'custom', message: `expected absolute http(s) URLs, comma-separated` });
        return z.NEVER;
      }
    }
    return [...new Set(urls)];
  });

// Standard Webhooks: "whsec_" then the base64 of 24 to 64 random bytes.
const webhookSecret = z.string().refine((text) => {
  const body = text.replace(/^whsec_/, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) return false;
  const bytes = Buffer.from(body, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}, 'expected whsec_ followed by the base64 of 24 to 64 random bytes (e.g. whsec_$(openssl rand -base64 32))');

const webhookEventList = z.string().transform((text, ctx) => {
  const events = commaList(text);
  const unknown = events.filter((e) => !(webhookEventTypes as readonly string[]).includes(e));
  if (unknown.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown event ${unknown.join(', ')}; expected some of ${webhookEventTypes.join(', ')}`,
    });
    return z.NEVER;
  }
  return [...new Set(events)] as WebhookEventType[];
});

const durationList = z.string().transform((text, ctx) => {
  const delays = commaList(text).map(parseDuration);
  if (delays.length === 0 || delays.some((d) => d === null)) {
    ctx.addIssue({ code: 'custom', message: 'expected comma-separated durations like 5s,5m,30m,2h' });
    return z.NEVER;
  }
  return delays as number[];
});
const upstreamUrl = z.string().transform((text, ctx) => {
  const parsed = parseUpstreamUrl(text);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  }
  return parsed.url;
});

const headerLine = z
  .string()
  .refine((v) => parseHeaderLine(v) !== null, 'expected one header line like "X-Api-Key: <value>"');

/** `https://a.example, http://b.example:8080` → their origins; a path or a query is refused. */
const mediaOrigins = z.string().transform((text, ctx) => {
  const origins: string[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const url = URL.canParse(part) ? new URL(part) : null;
    const bare = url && url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '';
    if (!url || !/^https?:$/.test(url.protocol) || !bare || /[/?#]./.test(part.replace(/^\w+:\/\//, ''))) {
      ctx.addIssue({
        code: 'custom',
        message: `expected origins like https://media.example.com (got ${JSON.stringify(part)})`,
      });
      return z.NEVER;
    }
    origins.push(url.origin);
  }
  return origins;
});
function isPeerEntry(entry: string): boolean {
  if (entry === '*') return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
}

const peerList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== ''),
  )
  .refine((entries) => entries.every(isPeerEntry), 'expected comma-separated IP addresses, CIDRs or *');

interface Setting<S extends z.ZodType> {
  env: string;
  flag: string | null;
  doc: string;
  default: string | null;
  schema: S;
}

function setting<S extends z.ZodType>(
  env: string,
  flag: string | null,
  defaultValue: string | null,
  schema: S,
  doc: string,
): Setting<S> {
  return { env, flag, doc, default: defaultValue, schema };
}

/**
 * Every setting, its environment variable, its flag and its default: the single source the CLI,
 * the README's configuration table (checked by a test) and `loadConfig` read.
 */
export const settings = {
  upstreamUrl: setting(
    'UPSTREAM_URL',
    '--upstream',
    null,
    upstreamUrl.nullable(),
    'Base URL of the upstream site, or its full list URL. `https://user:pass@host` sends Basic auth. Unset with `start`: the demo (see Demo).',
  ),
  databasePath: setting(
    'DATABASE_PATH',
    '--db',
    './data/mirror.db',
    z.string().min(1),
    'SQLite database file (created with its folder).',
  ),
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
  requestTimeoutMs: setting(
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
  maxBodyBytes: setting(
    'UPSTREAM_MAX_BODY_BYTES',
    null,
    String(20 * 1024 * 1024),
    int(1024, 1024 ** 3),
    'Largest upstream page body accepted.',
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
  ),
  trustProxy: setting(
    'TRUST_PROXY',
    '--trust-proxy',
    'false',
    bool,
    'Build next/previous from X-Forwarded-Host and X-Forwarded-Proto.',
  ),
  cacheControl: setting(
    'CACHE_CONTROL',
    null,
    'no-cache',
    z.string().nullable(),
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
  syncCron: setting(
    'SYNC_CRON',
    '--cron',
    '*/10 * * * *',
    z.string().min(1),
    'Schedule of `start` (node-cron syntax, seconds field optional).',
  ),
  syncRandomDelayMs: setting(
    'SYNC_RANDOM_DELAY',
    null,
    '0s',
    duration,
    'Random delay up to this before each scheduled run (spreads replicas).',
  ),
  adminToken: setting(
    'ADMIN_TOKEN',
    null,
    null,
    z.string().min(16, 'expected at least 16 characters').nullable(),
    'Enables POST /api/mirror/sync/ with Authorization: Bearer <token>.',
  ),
  // Upstream authentication: the URL's user:password, a bearer token or one header. The values are
  // secrets: never logged, stored or echoed in an error (see SECRET_SETTINGS).
  upstreamToken: setting(
    'UPSTREAM_TOKEN',
    null,
    null,
    z.string().min(1).nullable(),
    'Sent as `Authorization: Bearer <token>` on every upstream request.',
  ),
  upstreamHeader: setting(
    'UPSTREAM_HEADER',
    null,
    null,
    headerLine.nullable(),
    'One header sent on every upstream request, e.g. `X-Api-Key: <key>`.',
  ),
  demo: setting(
    'DEMO',
    null,
    'false',
    bool,
    'Run `start` against the built-in simulated upstream on purpose (needed with `NODE_ENV=production`).',
  ),
  demoMutateEveryMs: setting(
    'DEMO_MUTATE_EVERY',
    null,
    '2m',
    duration,
    'Demo only: how often the simulated upstream changes its data.',
  ),
  demoPort: setting(
    'DEMO_UPSTREAM_PORT',
    null,
    '8766',
    int(0, 65535),
    'Demo only: port of the simulated upstream; its media host listens on the next port (0: any free ports).',
  ),
  // Webhooks (signed notifications from the transactional outbox; see src/webhooks/).
  webhookUrls: setting(
    'WEBHOOK_URLS',
    null,
    null,
    webhookUrlList,
    'Comma-separated endpoints notified of changes and failures (unset: no webhooks).',
  ),
  webhookSecret: setting(
    'WEBHOOK_SECRET',
    null,
    null,
    webhookSecret.nullable(),
    'Standard Webhooks signing secret, `whsec_` + base64 of 24 to 64 bytes (unset: unsigned POSTs, e.g. deploy hooks).',
  ),
  webhookEvents: setting(
    'WEBHOOK_EVENTS',
    null,
    webhookEventTypes.join(','),
    webhookEventList,
    'Event types sent (comma-separated).',
  ),
  webhookFailureThreshold: setting(
    'WEBHOOK_FAILURE_THRESHOLD',
    null,
    '3',
    int(1, 1000),
    'Consecutive failed runs that send `sync.failed`.',
  ),
  webhookRetrySchedule: setting(
    'WEBHOOK_RETRY_SCHEDULE',
    null,
    '5s,5m,30m,2h,5h,10h,10h',
    durationList,
    'Delays before each retry (jittered ±20 %); after the last, the delivery has failed.',
  ),
  webhookTimeoutMs: setting(
    'WEBHOOK_TIMEOUT',
    null,
    '15s',
    duration,
    "Total deadline of one delivery attempt (connect, headers and the answer's first KB).",
  ),
  // --- Media mirror ---
  mediaOrigins: setting(
    'MEDIA_ORIGINS',
    null,
    null,
    mediaOrigins.nullable(),
    'Comma-separated origins (e.g. `https://media.example.com`) whose media each sync mirrors; unset: no media mirrored.',
  ),
  mediaDir: setting(
    'MEDIA_DIR',
    null,
    null,
    z.string().min(1).nullable(),
    'Folder of the mirrored media files (unset: `media/` beside the database file).',
  ),
  mediaMaxBytes: setting(
    'MEDIA_MAX_BYTES',
    null,
    String(50 * 1024 * 1024),
    int(1, 1024 ** 4),
    'Largest media file accepted; a larger one is recorded as failed.',
  ),
  mediaRunMaxBytes: setting(
    'MEDIA_RUN_MAX_BYTES',
    null,
    String(2 * 1024 ** 3),
    int(1, 1024 ** 5),
    'Media bytes one run may download in total; files past the budget wait for the next run.',
  ),
  mediaConcurrency: setting('MEDIA_CONCURRENCY', null, '4', int(1, 64), 'Media downloads at once.'),
  mediaTimeoutMs: setting(
    'MEDIA_TIMEOUT',
    null,
    '60s',
    duration,
    'Total deadline of one media request, connect to last byte.',
  ),
  mediaRetentionMs: setting(
    'MEDIA_RETENTION',
    null,
    null,
    duration.nullable(),
    'Drop files no media version valid within this window references (unset: keep all).',
  ),
  mediaRewrite: setting(
    'MEDIA_REWRITE',
    null,
    'false',
    bool,
    "List endpoint (and `?as_of=`) serves the mirror's media URLs in place of the upstream's.",
  ),
  // Real clients in front of the list endpoint (see README "Real clients").
  forwardedAllowIps: setting(
    'FORWARDED_ALLOW_IPS',
    null,
    '127.0.0.1',
    peerList,
    'Peers (addresses, CIDRs, `*`) whose X-Forwarded-Proto/-Ssl/-Protocol make links https, as gunicorn.',
  ),
  keepAliveTimeoutMs: setting(
    'KEEP_ALIVE_TIMEOUT',
    null,
    '65s',
    duration,
    "Idle keep-alive of client connections (above a proxy's 60 s idle timeout).",
  ),
  metricsToken: setting(
    'METRICS_TOKEN',
    null,
    null,
    z.string().min(16, 'expected at least 16 characters').nullable(),
    'When set, /metrics answers only Authorization: Bearer <token> (401 otherwise).',
  ),
  listCacheBytes: setting(
    'LIST_CACHE_BYTES',
    null,
    String(32 * 1024 * 1024),
    int(0, 1024 ** 3),
    "Byte budget of the list endpoint's cache of prepared answers (0: no cache).",
  ),
  // Reliability bounds (issue 8): every wait has an end, every memory a byte budget.
  maxListingBytes: setting(
    'SYNC_MAX_LISTING_BYTES',
    null,
    String(256 * 1024 * 1024),
    int(1024, 1024 ** 4),
    'Largest whole listing (sum of page bodies) a run reads; past it the run fails.',
  ),
  maxListingEntries: setting(
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
  maxSyncDurationMs: setting(
    'SYNC_MAX_DURATION',
    null,
    '15m',
    duration,
    'Total deadline of one run; past it the run fails naming the request that stalled.',
  ),
  requestDeadlineMs: setting(
    'UPSTREAM_REQUEST_DEADLINE',
    null,
    '2m',
    duration,
    'Total deadline of one upstream request attempt, headers and whole body (UPSTREAM_TIMEOUT is per chunk).',
  ),
  maxOptionsBytes: setting(
    'UPSTREAM_MAX_OPTIONS_BYTES',
    null,
    String(64 * 1024),
    int(256, 1024 ** 3),
    'Largest OPTIONS body stored; a larger one is not stored and the previous one is kept.',
  ),
  syncMaxHeapMb: setting(
    'SYNC_MAX_HEAP_MB',
    null,
    '1024',
    int(64, 65_536),
    'Heap limit (MiB) of the sync process `start` runs each sync in; past it that process dies, not the server.',
  ),
  asOfCacheBytes: setting(
    'AS_OF_CACHE_BYTES',
    null,
    String(64 * 1024 * 1024),
    int(0, 1024 ** 4),
    'Memory budget of the past snapshots kept for `?as_of=` (0: keep none).',
  ),
  httpRequestTimeoutMs: setting(
    'HTTP_REQUEST_TIMEOUT',
    null,
    '30s',
    duration,
    'Longest a client may take to send a whole request to the server (headers within 10 s at most).',
  ),
  logLevel: setting(
    'LOG_LEVEL',
    '--log-level',
    'info',
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    'pino log level.',
  ),
} as const;

export type Settings = typeof settings;
export type SettingKey = keyof Settings;
export type SettingValues = { [K in SettingKey]: z.output<Settings[K]['schema']> };

/** What the settings imply together, worked out once so no caller re-derives it. */
export interface DerivedConfig {
  /** The upstream to mirror with its masked label and auth headers; null: none named (demo or error). */
  upstream: UpstreamTarget | null;
  /** Settings given by a variable or a flag rather than defaulted. */
  explicit: ReadonlySet<SettingKey>;
  /** Unknown variables that look like misspelt settings; the CLI warns about each. */
  unknownVariables: UnknownVariable[];
  /** `NODE_ENV=production`: `start` then refuses to fall back to the demo. */
  production: boolean;
}

export type Config = SettingValues & DerivedConfig;

/** Flag values by setting key, as commander gives them (strings, or booleans for switches). */
export type FlagValues = Partial<Record<SettingKey, string | boolean | undefined>>;

/** Values never echoed: a config error says how long they were, not what they were. */
const SECRET_SETTINGS: ReadonlySet<SettingKey> = new Set([
  'adminToken',
  'upstreamToken',
  'upstreamHeader',
  'webhookSecret',
]);
/** URLs whose user:password part is masked when echoed. */
const URL_SETTINGS: ReadonlySet<SettingKey> = new Set(['upstreamUrl', 'publicBaseUrl']);

/** Variables read outside the settings table; known, so never reported as typos. */
const OTHER_KNOWN_VARIABLES = ['NODE_ENV', 'NO_COLOR', 'FORCE_COLOR', 'TZ'];

function shown(key: SettingKey, raw: string | null): string {
  if (raw === null) return 'nothing';
  if (SECRET_SETTINGS.has(key)) return `${raw.length} characters, not shown`;
  return JSON.stringify(URL_SETTINGS.has(key) ? maskUrlCredentials(raw) : raw);
}

/**
 * Parses the environment and flags once (a flag beats its variable); throws ConfigError naming every
 * offending variable or flag and what it expects, never echoing a secret.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  flags: FlagValues = {},
): Config {
  const issues: { name: string; problem: string }[] = [];
  const out: Record<string, unknown> = {};
  const raws: Partial<Record<SettingKey, string>> = {};
  const explicit = new Set<SettingKey>();
  for (const [key, s] of Object.entries(settings) as [SettingKey, Setting<z.ZodType>][]) {
    const flag = flags[key];
    const fromFlag = flag !== undefined;
    const fromEnv = !fromFlag && env[s.env] !== undefined && env[s.env] !== '';
    const raw = fromFlag ? String(flag) : fromEnv ? (env[s.env] ?? null) : s.default;
    if (fromFlag || fromEnv) explicit.add(key);
    if (raw !== null) raws[key] = raw;
    const name = fromFlag && s.flag ? s.flag : s.env;
    const parsed = s.schema.safeParse(raw);
    if (parsed.success) out[key] = parsed.data;
    else {
      const problem = parsed.error.issues.map((i) => i.message).join('; ');
      issues.push({ name, problem: `${problem} (got ${shown(key, raw)})` });
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  const values = out as SettingValues;
  const upstream = upstreamTarget(values, raws.upstreamUrl ?? null, issues);
  if (values.demo && upstream) {
    issues.push({
      name: 'DEMO',
      problem: 'DEMO=1 runs the built-in simulated upstream, but UPSTREAM_URL is set too: unset one of them',
    });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    ...values,
    upstream,
    explicit,
    production: env.NODE_ENV === 'production',
    unknownVariables: findUnknownVariables(env, {
      known: [...Object.values(settings).map((s) => s.env), ...OTHER_KNOWN_VARIABLES],
      ownedPrefixes: [...new Set(Object.values(settings).map((s) => `${s.env.split('_', 1)[0]}_`))].filter(
        (p) => Object.values(settings).filter((s) => s.env.startsWith(p)).length > 1,
      ),
    }),
  };
}

/** Gathers the URL's credentials, the token and the header; two sources of Authorization is an error. */
function upstreamTarget(
  values: SettingValues,
  rawUrl: string | null,
  issues: { name: string; problem: string }[],
): UpstreamTarget | null {
  if (values.upstreamUrl === null || rawUrl === null) return null;
  const parsed = parseUpstreamUrl(rawUrl);
  if (!parsed.ok) return null;
  const headers: Record<string, string> = {};
  const sources: string[] = [];
  if (parsed.basicAuth) {
    headers.authorization = parsed.basicAuth;
    sources.push('the user:password in UPSTREAM_URL');
  }
  if (values.upstreamToken) {
    headers.authorization = `Bearer ${values.upstreamToken}`;
    sources.push('UPSTREAM_TOKEN');
  }
  const header = values.upstreamHeader ? parseHeaderLine(values.upstreamHeader) : null;
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
  return { url: parsed.url, label: parsed.label, headers };
}
