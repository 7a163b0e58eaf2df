import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  chooseDatabase,
  maskPassword,
  parseDbArgument,
  parsePostgresUrl,
} from '../../src/config/database-url.js';
import { settings } from '../../src/config/setting-table.js';
import { databaseUrl } from '../../src/config/values.js';

const SECRET = 's3cr3t-Pa55';

describe('DATABASE_URL', () => {
  it('parses a postgres:// URL into what pg needs and a label without the password', () => {
    expect(parsePostgresUrl(`postgres://mirror:${SECRET}@db.internal:6543/history`)).toEqual({
      ok: true,
      value: {
        kind: 'postgres',
        connectionString: `postgres://mirror:${SECRET}@db.internal:6543/history`,
        label: 'postgres://mirror:***@db.internal:6543/history',
        host: 'db.internal',
        port: 6543,
        database: 'history',
        user: 'mirror',
        connectTimeoutMs: 10_000,
      },
    });
  });

  it.each([
    ['postgresql://mirror@db/history', { host: 'db', port: 5432, database: 'history', user: 'mirror' }],
    ['postgres://mirror@db', { host: 'db', port: 5432, database: 'mirror', user: 'mirror' }],
    ['postgres://[::1]:5433/history', { host: '::1', port: 5433, database: 'history', user: 'postgres' }],
    [
      'postgres://mirror@/history?host=/var/run/postgresql',
      { host: '/var/run/postgresql', port: 5432, database: 'history', user: 'mirror' },
    ],
    ['postgres://m%40corp@db/hist%20ory', { host: 'db', port: 5432, database: 'hist ory', user: 'm@corp' }],
  ])('%s', (text, expected) => {
    const parsed = parsePostgresUrl(text);
    expect(parsed.ok && { ...parsed.value, connectionString: undefined, label: undefined }).toMatchObject(
      expected,
    );
  });

  it.each([
    ['mysql://db/history', 'expected a URL like postgres://user:password@host:5432/database'],
    ['postgres://', 'expected a host (postgres://user@host/db) or ?host=/socket/folder'],
    ['postgres:///history', 'expected a host (postgres://user@host/db) or ?host=/socket/folder'],
    [
      'postgres://db/h?sslmode=required',
      'sslmode must be one of disable, prefer, require, verify-ca, verify-full',
    ],
    [
      'postgres://db/h?sslmode=verify-ca',
      'sslmode=verify-ca needs sslrootcert=<CA file>: without it any certificate a public CA signed is trusted',
    ],
    ['postgres://db/h?connect_timeout=soon', 'connect_timeout is a whole number of seconds'],
    [
      'postgres://db/h?target_session_attrs=read-write&sslmod=require',
      'unsupported parameter target_session_attrs, sslmod; accepted: sslmode, sslrootcert, sslcert, sslkey, ' +
        'application_name, fallback_application_name, options, client_encoding, connect_timeout, keepalives, ' +
        'keepalives_idle, host, port, user, password',
    ],
    ['postgres://u:%zz@db/h', 'the user, password or database name is not valid percent-encoding'],
  ])('refuses %s', (text, problem) => {
    expect(parsePostgresUrl(text)).toEqual({ ok: false, problem });
  });

  it('keeps the libpq meaning of sslmode: require encrypts without verifying, as with psql', () => {
    const parsed = parsePostgresUrl('postgres://u:p@db/h?sslmode=require');
    if (!parsed.ok) throw new Error(parsed.problem);
    expect(parsed.value.connectionString).toBe('postgres://u:p@db/h?sslmode=require&uselibpqcompat=true');
    // What pg makes of it: TLS without certificate verification, and no warning about aliases.
    const params = new pg.Client({ connectionString: parsed.value.connectionString });
    expect((params as unknown as { ssl: unknown }).ssl).toEqual({ rejectUnauthorized: false });
  });

  it.each([
    ['connect_timeout=0', 0],
    ['connect_timeout=1', 2_000],
    ['connect_timeout=30', 30_000],
  ])('%s bounds each connection attempt as libpq does', (query, ms) => {
    const parsed = parsePostgresUrl(`postgres://db/h?${query}`);
    expect(parsed.ok && parsed.value.connectTimeoutMs).toBe(ms);
  });

  it('never puts the password in a problem', () => {
    for (const text of [
      `postgres://u:${SECRET}@/h`,
      `postgres://u:${SECRET}@db/h?bad=1`,
      `pg://u:${SECRET}@db/h`,
    ]) {
      const parsed = parsePostgresUrl(text);
      expect(parsed.ok).toBe(false);
      expect(JSON.stringify(parsed)).not.toContain(SECRET);
    }
  });

  it('is a zod schema for the settings table', () => {
    expect(databaseUrl.safeParse('postgres://db/h').success).toBe(true);
    expect(databaseUrl.safeParse('http://db/h').error?.issues.map((i) => i.message)).toEqual([
      'expected a URL like postgres://user:password@host:5432/database',
    ]);
  });
});

describe('maskPassword', () => {
  it.each([
    [`postgres://mirror:${SECRET}@db/history`, 'postgres://mirror:***@db/history'],
    [
      `postgresql://mirror:${SECRET}@db:5432/history?sslmode=require`,
      'postgresql://mirror:***@db:5432/history?sslmode=require',
    ],
    [
      `postgres://mirror@db/history?password=${SECRET}&sslmode=require`,
      'postgres://mirror@db/history?password=***&sslmode=require',
    ],
    ['postgres://mirror@db/history', 'postgres://mirror@db/history'],
    // Not a valid URL (a bad port), still masked: the broken ones are the ones put in error messages.
    [`postgres://mirror:${SECRET}@db:99999999/history`, 'postgres://mirror:***@db:99999999/history'],
  ])('%s → %s', (text, masked) => {
    expect(maskPassword(text)).toBe(masked);
  });
});

// expect.objectContaining is typed `any`; the cases hold it as what it is, a matcher.
const postgresTo = (host: string, database: string): unknown =>
  expect.objectContaining({ kind: 'postgres', host, database });

describe('--db', () => {
  it.each([
    [
      './data/mirror.db',
      { ok: true, value: { kind: 'sqlite', path: './data/mirror.db', label: './data/mirror.db' } },
    ],
    [
      '/var/lib/mirror/history.db',
      {
        ok: true,
        value: { kind: 'sqlite', path: '/var/lib/mirror/history.db', label: '/var/lib/mirror/history.db' },
      },
    ],
    ['postgres://db/history', { ok: true, value: postgresTo('db', 'history') }],
    ['postgresql://db/history', { ok: true, value: postgresTo('db', 'history') }],
    [
      'mysql://db/history',
      {
        ok: false,
        problem: 'mysql:// is not a database this mirror uses: give a SQLite file path or a postgres:// URL',
      },
    ],
    ['', { ok: false, problem: 'expected a SQLite file path or a postgres:// URL' }],
  ])('%s', (text, expected) => {
    expect(parseDbArgument(text)).toEqual(expected);
  });
});

describe('choosing the database', () => {
  const defaultPath = './data/mirror.db';
  const sqlite = (path: string) => ({ ok: true, target: { kind: 'sqlite', path, label: path } });

  it.each([
    ['nothing set: the default SQLite file', {}, sqlite(defaultPath)],
    ['DATABASE_PATH', { DATABASE_PATH: '/srv/m.db' }, sqlite('/srv/m.db')],
    [
      '--db over DATABASE_URL',
      { flag: '/srv/flag.db', DATABASE_URL: 'postgres://db/h' },
      sqlite('/srv/flag.db'),
    ],
    [
      '--db over both variables',
      { flag: '/srv/flag.db', DATABASE_URL: 'postgres://db/h', DATABASE_PATH: '/x' },
      sqlite('/srv/flag.db'),
    ],
    ['an empty variable is unset', { DATABASE_URL: '', DATABASE_PATH: '/srv/m.db' }, sqlite('/srv/m.db')],
  ])('%s', (_name, inputs, expected) => {
    expect(chooseDatabase({ defaultPath, ...inputs })).toEqual(expected);
  });

  it('DATABASE_URL picks PostgreSQL', () => {
    const choice = chooseDatabase({ defaultPath, DATABASE_URL: `postgres://u:${SECRET}@db/h` });
    expect(choice.ok && choice.target.label).toBe('postgres://u:***@db/h');
  });

  it('DATABASE_URL and DATABASE_PATH both set is an error naming both', () => {
    const problem =
      'DATABASE_URL and DATABASE_PATH are both set; set DATABASE_URL for PostgreSQL or DATABASE_PATH for SQLite, not both';
    expect(
      chooseDatabase({ defaultPath, DATABASE_URL: 'postgres://db/h', DATABASE_PATH: '/srv/m.db' }),
    ).toEqual({
      ok: false,
      issues: [
        { name: 'DATABASE_URL', problem },
        { name: 'DATABASE_PATH', problem },
      ],
    });
  });

  it('a bad URL names its variable or flag', () => {
    expect(chooseDatabase({ defaultPath, DATABASE_URL: 'postgres://db/h?sslmode=on' })).toEqual({
      ok: false,
      issues: [
        {
          name: 'DATABASE_URL',
          problem:
            'got 26 characters, not shown: sslmode must be one of disable, prefer, require, verify-ca, verify-full',
        },
      ],
    });
    expect(chooseDatabase({ defaultPath, flag: 'redis://db' })).toEqual({
      ok: false,
      issues: [
        {
          name: '--db',
          problem:
            'redis:// is not a database this mirror uses: give a SQLite file path or a postgres:// URL (got "redis://db")',
        },
      ],
    });
    // A URL that may carry a password is never quoted.
    expect(chooseDatabase({ defaultPath, flag: 'mysql://mirror:S3cr3t@db/h' })).toEqual({
      ok: false,
      issues: [
        {
          name: '--db',
          problem:
            'got 26 characters, not shown: mysql:// is not a database this mirror uses: give a SQLite file path or a postgres:// URL',
        },
      ],
    });
  });
});

describe('DATABASE_POOL_MAX', () => {
  const databasePoolMax = settings.database.poolMax.schema;

  it.each([
    ['10', 10],
    [' 1 ', 1],
    ['100', 100],
  ])('%s', (text, value) => {
    expect(databasePoolMax.safeParse(text)).toEqual({ success: true, data: value });
  });

  it.each([
    ['0', 'expected at least 1'],
    ['101', 'expected at most 100'],
    ['ten', 'expected a whole number from 1 to 100'],
  ])('refuses %s', (text, message) => {
    expect(databasePoolMax.safeParse(text)).toEqual({
      success: false,
      error: { issues: [{ code: 'custom', message }] },
    });
  });
});
