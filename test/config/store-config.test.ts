import { describe, expect, it } from 'vitest';
import type { FlagValues } from '../../src/config/raw-settings.js';
import { loadConfig } from '../../src/config/load-config.js';
import { loadSettings } from '../../src/config/load-settings.js';
import type { settings } from '../../src/config/setting-table.js';
import { settingList } from '../../src/config/setting-table.js';
import { defaultOf } from '../../src/config/settings.js';
import { ConfigError } from '../../src/errors.js';

type Env = Record<string, string>;

/** The issues a loader throws, or the config it returns. */
function outcome<T>(load: () => T): { issues: ConfigError['issues'] } | { value: T } {
  try {
    return { value: load() };
  } catch (error) {
    if (error instanceof ConfigError) return { issues: error.issues };
    throw error;
  }
}

const URL_WITH_SECRET = 'postgres://mirror:s3cret@db.example.com:5433/mirror?sslmode=require';

describe('the settings table and its schemas', () => {
  it('every default parses under its schema', () => {
    for (const s of settingList) {
      if (s.default === null) continue;
      const group = s.group as keyof typeof settings;
      expect(() => defaultOf(group, s.name as never), s.key).not.toThrow();
    }
  });
});

describe('the one loader, asked for the database settings alone, parses them as it does among them all', () => {
  it.each<[string, Env, FlagValues]>([
    ['nothing set', {}, {}],
    ['DATABASE_PATH', { DATABASE_PATH: '/srv/m.db' }, {}],
    ['an empty variable is unset', { DATABASE_PATH: '', DATABASE_URL: '' }, {}],
    ['--db beats DATABASE_PATH', { DATABASE_PATH: '/srv/m.db' }, { 'database.path': '/tmp/x.db' }],
    ['DATABASE_URL with a pool size', { DATABASE_URL: URL_WITH_SECRET, DATABASE_POOL_MAX: ' 7 ' }, {}],
    ['--db with a URL', {}, { 'database.path': URL_WITH_SECRET }],
  ])('%s: the same database, explicit settings and warnings', (_name, env, flags) => {
    const full = loadConfig(env, flags);
    const store = loadSettings(env, flags, { only: 'database' });
    expect(store.database).toEqual(full.database);
    expect([...store.explicit]).toEqual([...full.explicit].filter((k) => k.startsWith('database.')));
    expect(store.unknownVariables).toEqual(full.unknownVariables);
  });

  it.each<[string, Env, FlagValues]>([
    ['a pool size out of range', { DATABASE_POOL_MAX: '0' }, {}],
    ['a pool size that is no number', { DATABASE_POOL_MAX: 'ten' }, {}],
    ['a pool size too large', { DATABASE_POOL_MAX: '99999999999999999999' }, {}],
    ['a URL of another scheme', { DATABASE_URL: 'mysql://u:s3cret@h/db' }, {}],
    ['an empty --db', {}, { 'database.path': '' }],
    ['--db of another scheme', {}, { 'database.path': 'http://h/db' }],
    [
      'DATABASE_URL and DATABASE_PATH both',
      { DATABASE_URL: URL_WITH_SECRET, DATABASE_PATH: '/srv/m.db' },
      {},
    ],
    ['every database setting wrong at once', { DATABASE_URL: 'nope', DATABASE_POOL_MAX: '-1' }, {}],
  ])('%s: the same ConfigError, naming the same settings', (_name, env, flags) => {
    const full = outcome(() => loadConfig(env, flags));
    expect(full).toHaveProperty('issues');
    expect(outcome(() => loadSettings(env, flags, { only: 'database' }))).toEqual(full);
  });

  it('leaves the settings a read command does not use to the commands that do', () => {
    const env = { SYNC_MAX_PAGES: 'many', DATABASE_PATH: '/srv/m.db' };
    expect(outcome(() => loadConfig(env))).toHaveProperty('issues');
    expect(loadSettings(env, {}, { only: 'database' }).database.path).toBe('/srv/m.db');
  });
});
