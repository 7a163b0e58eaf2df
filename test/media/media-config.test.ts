import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';

describe('media configuration', () => {
  it("is off without MEDIA_ORIGINS; its folder defaults to the database's own beside it", () => {
    expect(loadConfig({}).media.origins).toBeNull();
    expect(loadConfig({ MEDIA_ORIGINS: ' , ' }).media.origins).toBeNull();
    expect(
      loadConfig({
        MEDIA_ORIGINS: 'https://media.example.com/, http://cdn.example.org:8080',
        DATABASE_PATH: '/srv/m/mirror.db',
      }).media,
    ).toEqual({
      origins: ['https://media.example.com', 'http://cdn.example.org:8080'],
      dir: '/srv/m/mirror.db.media',
      ownDir: '/srv/m/mirror.db.media',
      legacyDir: '/srv/m/media',
      maxBytes: 50 * 1024 * 1024,
      runMaxBytes: 2 * 1024 ** 3,
      concurrency: 4,
      timeoutMs: 60_000,
      retentionMs: null,
      rewrite: false,
    });
  });

  it.each([
    'https://media.example.com/uploads/',
    'ftp://media.example.com',
    'https://user:pw@media.example.com',
    'media',
  ])('refuses MEDIA_ORIGINS=%s, naming the variable', (value) => {
    expect(() => loadConfig({ MEDIA_ORIGINS: value })).toThrow(
      /MEDIA_ORIGINS: entry 1 of 1: .*expected an origin like https:\/\/media\.example\.com/,
    );
  });

  it('reads MEDIA_RETENTION as a duration and MEDIA_REWRITE as a switch', () => {
    const config = loadConfig({ MEDIA_RETENTION: '30d', MEDIA_REWRITE: 'true', MEDIA_DIR: '/var/media' });
    expect([config.media.retentionMs, config.media.rewrite, config.media.dir]).toEqual([
      30 * 86_400_000,
      true,
      '/var/media',
    ]);
  });
});
