import { z } from 'zod';
import { ConfigError } from './errors.js';

/** "90s", "10m", "12h", "7d", or plain milliseconds. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms'] ?? 1;
  return Math.round(Number(match[1]) * unit);
}

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
    httpUrl.nullable(),
    'Base URL of the upstream site (the list path is appended). Unset with `start`: the built-in simulated upstream (demo).',
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
    '0',
    int(0, 65535),
    'Demo only: port of the simulated upstream (0: any free port).',
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
export type Config = { [K in SettingKey]: z.output<Settings[K]['schema']> };

/** Flag values by setting key, as commander gives them (strings, or booleans for switches). */
export type FlagValues = Partial<Record<SettingKey, string | boolean | undefined>>;

/**
 * Parses the environment and flags once (a flag beats its variable); throws ConfigError naming every
 * offending variable or flag and what it expects.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  flags: FlagValues = {},
): Config {
  const issues: { name: string; problem: string }[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings) as [SettingKey, Setting<z.ZodType>][]) {
    const flag = flags[key];
    const fromFlag = flag !== undefined;
    const raw = fromFlag
      ? String(flag)
      : env[s.env] !== undefined && env[s.env] !== ''
        ? env[s.env]
        : s.default;
    const name = fromFlag && s.flag ? s.flag : s.env;
    const parsed = s.schema.safeParse(raw ?? null);
    if (parsed.success) out[key] = parsed.data;
    else {
      const problem = parsed.error.issues.map((i) => i.message).join('; ');
      issues.push({ name, problem: `${problem} (got ${JSON.stringify(raw)})` });
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return out as Config;
}
