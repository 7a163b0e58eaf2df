import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { openStore } from '../../src/db/open-store.js';
import { ConfigError, MirrorError } from '../../src/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { syncEnvFrom } from '../../src/sync/child-env.js';
import { freePort } from '../helpers/postgres.js';

const URL_WITH_SECRET = 'postgres://mirror:s3cret@db.example.com:5433/mirror?sslmode=require';

function configIssues(env: Record<string, string>, flags = {}): string {
  try {
    loadConfig(env, flags);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('choosing the store', () => {
  it.each([
    ['nothing set: the default SQLite file', {}, {}, { kind: 'sqlite', path: './data/mirror.db' }],
    ['DATABASE_PATH: SQLite', { DATABASE_PATH: '/srv/m.db' }, {}, { kind: 'sqlite', path: '/srv/m.db' }],
    [
      'DATABASE_URL: PostgreSQL',
      { DATABASE_URL: URL_WITH_SECRET },
      {},
      { kind: 'postgres', host: 'db.example.com', port: 5433, database: 'mirror', user: 'mirror' },
    ],
    [
      '--db with a URL beats DATABASE_PATH',
      { DATABASE_PATH: '/srv/m.db' },
      { 'database.path': 'postgresql://u:p@h/d' },
      { kind: 'postgres', host: 'h', database: 'd', label: 'postgresql://u:***@h/d' },
    ],
    [
      '--db with a path beats DATABASE_URL',
      { DATABASE_URL: URL_WITH_SECRET },
      { 'database.path': './x.db' },
      { kind: 'sqlite', path: './x.db' },
    ],
  ])('%s', (_name, env, flags, target) => {
    expect(loadConfig(env, flags).database.target).toMatchObject(target);
  });

  it('with PostgreSQL, the path shown is the masked URL and media go to a folder named after the database in ./data', () => {
    const config = loadConfig({ DATABASE_URL: URL_WITH_SECRET, DATABASE_POOL_MAX: '4' });
    expect(config.database).toMatchObject({
      path: 'postgres://mirror:***@db.example.com:5433/mirror?sslmode=require',
      poolMax: 4,
    });
    expect(config.media).toMatchObject({
      dir: 'data/mirror@db.example.com-5433.media',
      ownDir: 'data/mirror@db.example.com-5433.media',
      legacyDir: 'data/media',
    });
  });

  it('both variables set: exit 2 naming both, the password never shown', () => {
    const message = configIssues({ DATABASE_URL: URL_WITH_SECRET, DATABASE_PATH: './m.db' });
    expect(message).toContain('DATABASE_URL: DATABASE_URL and DATABASE_PATH are both set');
    expect(message).toContain('DATABASE_PATH: DATABASE_URL and DATABASE_PATH are both set');
    expect(message).not.toContain('s3cret');
    expect(exitCodeFor('CONFIG_INVALID')).toBe(2);
  });

  it('a bad DATABASE_URL or pool size names the variable, not the password', () => {
    const message = configIssues({
      DATABASE_URL: 'postgres://u:s3cret@h/db?bogus=1',
      DATABASE_POOL_MAX: '0',
    });
    expect(message).toContain('DATABASE_URL: unsupported parameter bogus');
    expect(message).toContain('DATABASE_POOL_MAX: expected at least 1');
    expect(message).not.toContain('s3cret');
  });

  it('the child sync gets the chosen store as the one variable naming it, the other emptied', () => {
    const cases: [Record<string, string>, Record<string, string>][] = [
      [{ DATABASE_URL: URL_WITH_SECRET }, { DATABASE_URL: URL_WITH_SECRET, DATABASE_PATH: '' }],
      [{ DATABASE_PATH: '/srv/m.db' }, { DATABASE_PATH: '/srv/m.db', DATABASE_URL: '' }],
    ];
    for (const [env, expected] of cases) {
      const parent = loadConfig({ ...env, UPSTREAM_URL: 'https://example.com' });
      const target = parent.upstream.target;
      if (!target) throw new Error('no target');
      const childEnv = syncEnvFrom({ ...parent, upstream: { ...parent.upstream, target } });
      expect(childEnv).toMatchObject(expected);
      // The child inherits the parent's environment beneath these: still one store, the same one.
      expect(loadConfig({ ...env, ...childEnv }).database).toEqual(parent.database);
    }
  });

  it('an unreachable PostgreSQL: DB_ERROR (exit 8), the password masked', async () => {
    const port = await freePort();
    const config = loadConfig({ DATABASE_URL: `postgres://mirror:s3cret@127.0.0.1:${port}/mirror` });
    const error = await openStore(config.database).then(
      () => expect.fail('opened an unreachable database'),
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(MirrorError);
    expect(error).toMatchObject({ code: 'DB_ERROR' });
    expect(exitCodeFor((error as MirrorError).code)).toBe(8);
    expect(
      JSON.stringify({ message: (error as Error).message, details: (error as MirrorError).details }),
    ).not.toContain('s3cret');
  });
});
