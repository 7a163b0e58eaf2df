import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { loadSettings } from '../../src/config/load-settings.js';
import { settingList } from '../../src/config/setting-table.js';
import { ConfigError } from '../../src/errors.js';
import { SECRET_CASES } from '../helpers/secret-settings.js';

function refusal(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('a setting that may hold a secret is refused without it', () => {
  it.each(SECRET_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const error = refusal(() => loadConfig(c.env));
    expect(error.issues).toEqual(c.issues);
    for (const text of c.secrets) expect(error.message).not.toContain(text);
  });

  it.each(
    SECRET_CASES.filter((c) => c.settings.every((s) => s.startsWith('database.'))).map(
      (c) => [c.name, c] as const,
    ),
  )('a read command refuses it alike: %s', (_name, c) => {
    const error = refusal(() => loadSettings(c.env, {}, { only: 'database' }));
    expect(error.issues).toEqual(c.issues);
    for (const text of c.secrets) expect(error.message).not.toContain(text);
  });

  it('every setting the table marks secret or URL has a case (a new one needs its own)', () => {
    const marked = settingList.filter((s) => s.echo !== 'plain').map((s) => s.key);
    expect(marked).toEqual([
      'upstream.url',
      'upstream.token',
      'upstream.header',
      'database.url',
      'server.internalBaseUrl',
      'server.publicBaseUrl',
      'server.adminToken',
      'server.metricsToken',
      'media.origins',
      'webhooks.urls',
      'webhooks.secret',
      'notify.urls',
    ]);
    const covered = new Set(SECRET_CASES.flatMap((c) => c.settings));
    expect(marked.filter((key) => !covered.has(key))).toEqual([]);
  });
});
