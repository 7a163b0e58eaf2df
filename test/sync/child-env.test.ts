import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { syncEnvFrom } from '../../src/sync/child-env.js';

describe('the environment of a child sync', () => {
  it('carries the flags of start, the upstream with its credentials and MEDIA_ORIGINS; the child parses them back', () => {
    const parent = loadConfig(
      { UPSTREAM_URL: 'https://reader:s3cret@example.com/site/', MEDIA_ORIGINS: 'https://media.example.com' },
      { 'sync.concurrency': '2', 'sync.allowEmpty': true, 'database.path': '/srv/m.db', 'log.level': 'warn' },
    );
    const target = parent.upstream.target;
    if (!target) throw new Error('no target');
    const env = syncEnvFrom({ ...parent, upstream: { ...parent.upstream, target } });
    expect(env).toMatchObject({
      UPSTREAM_URL: 'https://reader:s3cret@example.com/site',
      DATABASE_PATH: '/srv/m.db',
      SYNC_CONCURRENCY: '2',
      SYNC_ALLOW_EMPTY: 'true',
      LOG_LEVEL: 'warn',
      MEDIA_ORIGINS: 'https://media.example.com',
    });
    // Settings without a flag reach the child through the environment it inherits, not from here.
    expect(env).not.toHaveProperty('UPSTREAM_TIMEOUT');
    const child = loadConfig(env);
    expect(child.upstream).toEqual(parent.upstream);
    expect([child.sync, child.media, child.database, child.log]).toEqual([
      parent.sync,
      parent.media,
      parent.database,
      parent.log,
    ]);
  });

  it('names the demo in place of no upstream', () => {
    const parent = loadConfig({});
    const demo = { url: 'http://127.0.0.1:8766', label: 'demo', headers: {} };
    const env = syncEnvFrom({
      ...parent,
      upstream: { ...parent.upstream, target: demo },
      media: { ...parent.media, origins: ['http://127.0.0.1:8767'] },
    });
    expect(env).toMatchObject({
      UPSTREAM_URL: 'http://127.0.0.1:8766',
      MEDIA_ORIGINS: 'http://127.0.0.1:8767',
    });
  });

  it('regression: an inherited DEMO=1 is cleared, so the demo child is not refused for naming its upstream', () => {
    const parent = loadConfig({ DEMO: '1' });
    const demo = { url: 'http://127.0.0.1:8766', label: 'demo', headers: {} };
    const env = syncEnvFrom({ ...parent, upstream: { ...parent.upstream, target: demo } });
    const child = loadConfig({ DEMO: '1', ...env });
    expect(child.demo.enabled).toBe(false);
    expect(child.upstream.target?.url).toBe('http://127.0.0.1:8766');
  });

  it('regression: a Basic Authorization from UPSTREAM_HEADER stays in the header, not in the URL', () => {
    const inherited = { UPSTREAM_URL: 'https://example.com', UPSTREAM_HEADER: 'Authorization: Basic dTpw' };
    const parent = loadConfig(inherited);
    const target = parent.upstream.target;
    if (!target) throw new Error('no target');
    const env = syncEnvFrom({ ...parent, upstream: { ...parent.upstream, target } });
    expect(env.UPSTREAM_URL).toBe('https://example.com');
    // Both credentials in the child were refused: "only one Authorization can be sent".
    const child = loadConfig({ ...inherited, ...env });
    expect(child.upstream.target).toEqual(target);
  });
});
