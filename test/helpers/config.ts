import { loadConfig, type Config } from '../../src/config/load-config.js';
import type { SyncConfig } from '../../src/sync/run-sync.js';

/** Environment variables by name, as a test sets them. */
export type TestEnv = Record<string, string>;

/**
 * What tests run with unless they say otherwise: few retries and short timeouts (a failure case
 * fails in seconds), a page cap that fits every test listing (and an entry cap those pages hold), list answers without Cache-Control,
 * and a server that notices a new snapshot within 50 ms.
 */
const TEST_ENV: TestEnv = {
  SYNC_MAX_PAGES: '1000',
  SYNC_MAX_ENTRIES: '8000',
  SYNC_MAX_CRAWL_ATTEMPTS: '2',
  UPSTREAM_TIMEOUT: '5s',
  UPSTREAM_CONNECT_TIMEOUT: '5s',
  UPSTREAM_MAX_ATTEMPTS: '2',
  UPSTREAM_MAX_RETRY_AFTER: '2s',
  CACHE_CONTROL: 'none',
  SNAPSHOT_POLL: '50',
};

/** loadConfig over the tests' environment and `env`; nothing comes from the process's own. */
export function testConfig(env: TestEnv = {}): Config {
  return loadConfig({ ...TEST_ENV, ...env });
}

/** The configuration of a run against `upstreamUrl`. */
export function syncConfig(upstreamUrl: string, env: TestEnv = {}): SyncConfig {
  const config = testConfig({ ...env, UPSTREAM_URL: upstreamUrl });
  const { target } = config.upstream;
  if (!target) throw new Error('testConfig named no upstream');
  return { ...config, upstream: { ...config.upstream, target } };
}
