import { describe, expect, it } from 'vitest';
import { loadConfig, maskUrlCredentials, settingList } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';

function configError(env: Record<string, string>, flags = {}): ConfigError {
  try {
    loadConfig(env, flags);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const basic = (userPass: string) => `Basic ${Buffer.from(userPass).toString('base64')}`;

describe('loadConfig', () => {
  it('applies every default when nothing is set, and calls nothing explicit', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      upstream: { target: null, timeoutMs: 30_000 },
      database: { path: './data/mirror.db' },
      sync: { concurrency: 4, cron: '*/10 * * * *' },
      server: { port: 8000, host: '127.0.0.1', adminToken: null, cacheControl: 'no-cache' },
      media: {
        origins: null,
        dir: 'data/mirror.db.media',
        ownDir: 'data/mirror.db.media',
        legacyDir: 'data/media',
      },
      demo: { enabled: false, port: 8766 },
      production: false,
      unknownVariables: [],
    });
    // The token and header are folded into the target, never kept beside it.
    expect(Object.keys(config.upstream)).not.toContain('token');
    expect([...config.explicit]).toEqual([]);
  });

  it('a flag beats its variable, and both count as explicit', () => {
    const config = loadConfig({ PORT: '9000', DATABASE_PATH: './a.db' }, { 'server.port': '9100' });
    expect(config.server.port).toBe(9100);
    expect(config.database.path).toBe('./a.db');
    expect([...config.explicit].sort()).toEqual(['database.path', 'server.port']);
  });

  it('names the flag, not the variable, when a flag gave the value', () => {
    expect(configError({ PORT: '9000' }, { 'server.port': 'x' }).issues).toEqual([
      { name: '--port', problem: 'expected a whole number from 0 to 65535 (got "x")' },
    ]);
  });

  it('derives what follows from the settings once: the media folder, and no Cache-Control for none', () => {
    const config = loadConfig({ DATABASE_PATH: '/srv/m/mirror.db', CACHE_CONTROL: 'none' });
    expect(config.media.dir).toBe('/srv/m/mirror.db.media');
    expect(config.server.cacheControl).toBeNull();
    expect(loadConfig({ DATABASE_PATH: '/srv/m/mirror.db', MEDIA_DIR: '/var/media' }).media.dir).toBe(
      '/var/media',
    );
  });

  it('names every offending variable and what it expects, in one error', () => {
    const error = configError({ SYNC_CONCURRENCY: 'lots', PORT: '99999', STALE_AFTER: 'soon' });
    expect(error.issues.map((i) => i.name)).toEqual(['SYNC_CONCURRENCY', 'PORT', 'STALE_AFTER']);
    expect(error.message).toContain('PORT: expected at most 65535 (got "99999")');
  });

  it.each([
    ['https://example.com', 'https://example.com'],
    ['https://example.com/', 'https://example.com'],
    ['https://example.com/api/model/team-block-coworker/list/', 'https://example.com'],
    ['https://example.com/api/model/team-block-coworker/list', 'https://example.com'],
    ['https://example.com/site/api/model/team-block-coworker/list/', 'https://example.com/site'],
    ['http://127.0.0.1:8766', 'http://127.0.0.1:8766'],
  ])('UPSTREAM_URL %s is crawled at %s', (raw, url) => {
    const config = loadConfig({ UPSTREAM_URL: raw });
    expect(config.upstream.target).toEqual({ url, label: url, headers: {} });
  });

  it.each([
    ['https://example.com/api/model/team-block-coworker/list/?page=2', 'without a query or fragment'],
    ['https://example.com/?', 'without a query or fragment'],
    ['https://example.com/#team', 'without a query or fragment'],
    ['ftp://example.com', 'expected an absolute http(s) URL'],
    ['example.com', 'expected an absolute http(s) URL'],
  ])('UPSTREAM_URL %s is refused', (raw, problem) => {
    expect(configError({ UPSTREAM_URL: raw }).issues).toEqual([
      { name: 'UPSTREAM_URL', problem: expect.stringContaining(problem) as string },
    ]);
  });

  it('credentials in the URL become Basic auth and are masked in the label', () => {
    const config = loadConfig({ UPSTREAM_URL: 'https://mirror%40team:p%3Ass-w0rd@example.com/list-site/' });
    expect(config.upstream.target).toEqual({
      url: 'https://example.com/list-site',
      label: 'https://mirror%40team:***@example.com/list-site',
      headers: { authorization: basic('mirror@team:p:ss-w0rd') },
      credentialsInUrl: true,
    });
  });

  it('a lone user name (often a token) is masked whole', () => {
    expect(loadConfig({ UPSTREAM_URL: 'https://tok3n@example.com' }).upstream.target).toEqual({
      url: 'https://example.com',
      label: 'https://***@example.com',
      headers: { authorization: basic('tok3n:') },
      credentialsInUrl: true,
    });
  });

  it('UPSTREAM_TOKEN and UPSTREAM_HEADER add their headers', () => {
    const config = loadConfig({
      UPSTREAM_URL: 'https://example.com',
      UPSTREAM_TOKEN: 'tok-123',
      UPSTREAM_HEADER: 'X-Api-Key:  key-456 ',
    });
    expect(config.upstream.target?.headers).toEqual({
      authorization: 'Bearer tok-123',
      'x-api-key': 'key-456',
    });
  });

  it('two sources of Authorization are refused', () => {
    const error = configError({ UPSTREAM_URL: 'https://u:p@example.com', UPSTREAM_TOKEN: 'tok-123' });
    expect(error.issues[0]?.problem).toMatch(/only one Authorization/);
  });

  it('never echoes a secret value in an error', () => {
    const error = configError({
      ADMIN_TOKEN: 'short-secret',
      UPSTREAM_HEADER: 'no colon secret-value',
      UPSTREAM_URL: 'ftp://user:hunter2-secret@example.com',
    });
    expect(error.message).not.toMatch(/short-secret|secret-value|hunter2/);
    expect(error.issues).toEqual([
      { name: 'UPSTREAM_URL', problem: expect.stringContaining('"ftp://user:***@example.com"') as string },
      {
        name: 'UPSTREAM_HEADER',
        problem: expect.stringContaining('(got 21 characters, not shown)') as string,
      },
      { name: 'ADMIN_TOKEN', problem: 'expected at least 16 characters (got 12 characters, not shown)' },
    ]);
  });

  it('never echoes the metrics token either', () => {
    expect(configError({ METRICS_TOKEN: 'short-secret' }).issues).toEqual([
      { name: 'METRICS_TOKEN', problem: 'expected at least 16 characters (got 12 characters, not shown)' },
    ]);
  });

  it('DEMO=1 with UPSTREAM_URL is a contradiction', () => {
    expect(configError({ DEMO: '1', UPSTREAM_URL: 'https://example.com' }).issues[0]?.name).toBe('DEMO');
  });

  it('NODE_ENV=production is noted for start to refuse the accidental demo', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).production).toBe(true);
  });

  it.each([
    ['UPSTREM_URL', 'UPSTREAM_URL'],
    ['SYNC_CRONN', 'SYNC_CRON'],
    ['upstream_url', 'UPSTREAM_URL'],
    ['DATABSE_PATH', 'DATABASE_PATH'],
    ['UPSTREAM_PASSWORD', expect.any(String) as string],
    ['SYNC_EVERY', expect.any(String) as string],
    ['ADMIN_TOKN', 'ADMIN_TOKEN'],
  ])('warns about %s, suggesting %s', (name, suggestion) => {
    expect(loadConfig({ [name]: 'x' }).unknownVariables).toEqual([{ name, suggestion }]);
  });

  it('leaves the rest of a usual environment alone', () => {
    const env = {
      PATH: '/usr/bin',
      HOME: '/root',
      HOSTNAME: 'box',
      PWD: '/app',
      NODE_OPTIONS: '--max-old-space-size=512',
      NODE_ENV: 'production',
      TERM: 'xterm',
      NO_COLOR: '1',
      TZ: 'UTC',
      SHLVL: '1',
      LANG: 'C.UTF-8',
      DATABASE_URL: 'postgres://elsewhere',
      npm_lifecycle_event: 'start',
      ...Object.fromEntries(settingList.map((s) => [s.env, s.default ?? ''])),
    };
    expect(loadConfig(env).unknownVariables).toEqual([]);
  });
});

describe('maskUrlCredentials', () => {
  it.each([
    ['https://user:pass@host/x', 'https://user:***@host/x'],
    ['https://token@host', 'https://***@host'],
    ['https://host/a@b', 'https://host/a@b'],
    ['not a url user:pass@host', 'not a url user:pass@host'],
  ])('%s → %s', (raw, masked) => expect(maskUrlCredentials(raw)).toBe(masked));
});

describe('logger redaction', () => {
  it('drops upstream credentials from any object logged whole', async () => {
    const { PassThrough } = await import('node:stream');
    const { createLogger } = await import('../../src/logger.js');
    const sink = new PassThrough();
    let text = '';
    sink.on('data', (c: Buffer) => (text += c.toString('utf8')));
    const logger = createLogger({ level: 'info', pretty: false, destination: sink });
    const config = loadConfig({
      UPSTREAM_URL: 'https://u:pw-secret@example.com',
      UPSTREAM_HEADER: 'X-Api-Key: key-secret',
    });
    logger.info({ config, target: config.upstream.target }, 'config');
    await new Promise((r) => setImmediate(r));
    expect(text).toContain('u:***@example.com');
    expect(text).not.toMatch(/pw-secret|key-secret|Basic /);
  });
});
