// Refused values of every setting that may hold a secret, each carrying secrets an error must never
// show, and the issues the configuration must name instead: one table for the loader's tests and
// for the processes that print them (test/e2e/secrets.test.ts).

/** A secret text: what must appear in no error, log line or stored byte. */
export const secret = (name: string) => `${name}-S3cr3t-never-shown`;

export interface SecretCase {
  /** What the case shows. */
  name: string;
  /** The settings under test (the setting table's key of each, for the coverage check). */
  settings: readonly string[];
  env: Record<string, string>;
  /** Every text of `env` that must not appear in the error, the valid siblings' secrets included. */
  secrets: readonly string[];
  /** The issues of the ConfigError, exactly. */
  issues: readonly { name: string; problem: string }[];
}

const notShown = (value: string, problem: string, place = '') =>
  `${place}got ${value.length} characters, not shown: ${problem}`;

const validHook = `https://hooks.example.com/services/T0/B0/${secret('valid-hook')}`;
const badHook = `htps://deploy.example.com/hook?token=${secret('bad-hook')}`;
const validSlack = `slack+https://hooks.slack.com/services/T0/B0/${secret('valid-slack')}`;
const badDiscord = `discord+htps://discord.com/api/webhooks/1/${secret('bad-discord')}`;
const badMail = `smtp://mirror:${secret('mail-password')}@mail.example.com:587/?to=a@example.com`;

export const SECRET_CASES: readonly SecretCase[] = [
  {
    name: 'WEBHOOK_URLS: the refused entry by its place, the valid one not at all',
    settings: ['webhooks.urls'],
    env: { WEBHOOK_URLS: `${validHook},${badHook}` },
    secrets: [secret('valid-hook'), secret('bad-hook'), 'deploy.example.com'],
    issues: [
      {
        name: 'WEBHOOK_URLS',
        problem: notShown(
          badHook,
          'the scheme is htps:, expected https: or http: (e.g. https://hooks.example.com/services/…)',
          'entry 2 of 2: ',
        ),
      },
    ],
  },
  {
    name: 'NOTIFY_URLS: each refused entry on its own line, the valid one not at all',
    settings: ['notify.urls'],
    env: { NOTIFY_URLS: `${validSlack},${badDiscord},${badMail}` },
    secrets: [secret('valid-slack'), secret('bad-discord'), secret('mail-password')],
    issues: [
      {
        name: 'NOTIFY_URLS',
        problem: notShown(
          badDiscord,
          'expected a chat webhook URL (kind+https://…) or an smtp(s):// URL',
          'entry 2 of 3: ',
        ),
      },
      {
        name: 'NOTIFY_URLS',
        problem: notShown(
          badMail,
          'an e-mail target needs ?from=<address>: smtp(s)://user:password@host:587/?from=a@example.com&to=b@example.com',
          'entry 3 of 3: ',
        ),
      },
    ],
  },
  {
    name: 'UPSTREAM_URL with credentials, and a header line that is none',
    settings: ['upstream.url', 'upstream.header'],
    env: {
      UPSTREAM_URL: `ftp://mirror:${secret('upstream-password')}@example.com`,
      UPSTREAM_HEADER: `X-Api-Key ${secret('api-key')}`,
    },
    secrets: [secret('upstream-password'), secret('api-key')],
    issues: [
      {
        name: 'UPSTREAM_URL',
        problem: notShown(
          `ftp://mirror:${secret('upstream-password')}@example.com`,
          'expected an absolute http(s) URL',
        ),
      },
      {
        name: 'UPSTREAM_HEADER',
        problem: notShown(
          `X-Api-Key ${secret('api-key')}`,
          'expected one header line like "X-Api-Key: <value>"',
        ),
      },
    ],
  },
  {
    name: 'UPSTREAM_URL with a token in its query',
    settings: ['upstream.url'],
    env: { UPSTREAM_URL: `https://example.com/?token=${secret('query-token')}` },
    secrets: [secret('query-token')],
    issues: [
      {
        name: 'UPSTREAM_URL',
        problem: notShown(
          `https://example.com/?token=${secret('query-token')}`,
          "expected the site's base URL without a query or fragment (e.g. https://example.com); the mirror adds ?page=N itself",
        ),
      },
    ],
  },
  {
    name: 'UPSTREAM_TOKEN beside the credentials of UPSTREAM_URL',
    settings: ['upstream.token'],
    env: {
      UPSTREAM_URL: `https://mirror:${secret('url-password')}@example.com`,
      UPSTREAM_TOKEN: secret('bearer-token'),
    },
    secrets: [secret('url-password'), secret('bearer-token')],
    issues: [
      {
        name: 'UPSTREAM_TOKEN / UPSTREAM_HEADER',
        problem:
          'only one Authorization can be sent, but the user:password in UPSTREAM_URL and UPSTREAM_TOKEN each set one: keep one',
      },
    ],
  },
  {
    name: 'the tokens and the signing secret, too short or malformed',
    settings: ['server.adminToken', 'server.metricsToken', 'webhooks.secret'],
    env: {
      ADMIN_TOKEN: secret('adm').slice(0, 15),
      METRICS_TOKEN: secret('met').slice(0, 12),
      WEBHOOK_SECRET: `whsec_${secret('signing')}`,
    },
    secrets: [secret('adm').slice(0, 15), secret('met').slice(0, 12), secret('signing')],
    issues: [
      { name: 'ADMIN_TOKEN', problem: 'got 15 characters, not shown: expected at least 16 characters' },
      { name: 'METRICS_TOKEN', problem: 'got 12 characters, not shown: expected at least 16 characters' },
      {
        name: 'WEBHOOK_SECRET',
        problem: notShown(
          `whsec_${secret('signing')}`,
          'expected whsec_ followed by the base64 of 24 to 64 random bytes (e.g. whsec_$(openssl rand -base64 32))',
        ),
      },
    ],
  },
  {
    name: 'INTERNAL_BASE_URL, PUBLIC_BASE_URL and MEDIA_ORIGINS with credentials',
    settings: ['server.internalBaseUrl', 'server.publicBaseUrl', 'media.origins'],
    env: {
      INTERNAL_BASE_URL: `ftp://ops:${secret('internal-password')}@mirror.internal`,
      PUBLIC_BASE_URL: `ftp://mirror:${secret('base-password')}@mirror.example.com`,
      MEDIA_ORIGINS: `https://media.example.com,https://cdn:${secret('media-password')}@cdn.example.com`,
    },
    secrets: [secret('internal-password'), secret('base-password'), secret('media-password')],
    issues: [
      {
        name: 'INTERNAL_BASE_URL',
        problem: notShown(
          `ftp://ops:${secret('internal-password')}@mirror.internal`,
          'expected an absolute http(s) URL',
        ),
      },
      {
        name: 'PUBLIC_BASE_URL',
        problem: notShown(
          `ftp://mirror:${secret('base-password')}@mirror.example.com`,
          'expected an absolute http(s) URL',
        ),
      },
      {
        name: 'MEDIA_ORIGINS',
        problem: notShown(
          `https://cdn:${secret('media-password')}@cdn.example.com`,
          'expected an origin like https://media.example.com (no path, query or user)',
          'entry 2 of 2: ',
        ),
      },
    ],
  },
  {
    name: 'DATABASE_URL with a password and a parameter PostgreSQL does not take',
    settings: ['database.url'],
    env: { DATABASE_URL: `postgres://mirror:${secret('db-password')}@db.example.com/mirror?bogus=1` },
    secrets: [secret('db-password')],
    issues: [
      {
        name: 'DATABASE_URL',
        problem: notShown(
          `postgres://mirror:${secret('db-password')}@db.example.com/mirror?bogus=1`,
          'unsupported parameter bogus; accepted: sslmode, sslrootcert, sslcert, sslkey, application_name, fallback_application_name, options, client_encoding, connect_timeout, keepalives, keepalives_idle, host, port, user, password',
        ),
      },
    ],
  },
  {
    name: 'DATABASE_URL without its scheme, its password where a host should be',
    settings: ['database.url'],
    env: { DATABASE_URL: `mirror:${secret('bare-password')}@db.example.com/mirror` },
    secrets: [secret('bare-password')],
    issues: [
      {
        name: 'DATABASE_URL',
        problem: notShown(
          `mirror:${secret('bare-password')}@db.example.com/mirror`,
          'expected a URL like postgres://user:password@host:5432/database',
        ),
      },
    ],
  },
  {
    name: 'DATABASE_PATH given a postgres:// URL',
    settings: ['database.path'],
    env: { DATABASE_PATH: `postgres://mirror:${secret('path-password')}@db.example.com/mirror` },
    secrets: [secret('path-password')],
    issues: [
      {
        name: 'DATABASE_PATH',
        problem: notShown(
          `postgres://mirror:${secret('path-password')}@db.example.com/mirror`,
          'DATABASE_PATH is a SQLite file path: set a postgres:// URL as DATABASE_URL',
        ),
      },
    ],
  },
];
