import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { MirrorError } from '../../src/errors.js';
import { buildUpstreamClient, runSync } from '../../src/sync/run-sync.js';
import type { UpstreamClient } from '../../src/upstream/client.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { syncConfig } from '../helpers/config.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

// An upstream whose metadata differs from DRF's default, so replay and a rebuilt default tell apart.
const UPSTREAM_OPTIONS =
  '{"name":"Team Block Coworker List","description":"Our team, as the site shows it.","renders":["application/json"],"parses":["application/json"]}';

/** The real client, with OPTIONS answered by `options` (a body; null: an upstream failure). */
function clientWithOptions(url: string, options: string | null): UpstreamClient {
  const real = buildUpstreamClient(syncConfig(url), silentLogger());
  return {
    getJson: (target, context) => real.getJson(target, context),
    getText: (target, method, context) => {
      if (method !== 'OPTIONS') return real.getText(target, method, context);
      if (options === null) {
        return Promise.reject(
          new MirrorError('UPSTREAM_HTTP_STATUS', 'OPTIONS answered 502', { status: 502 }),
        );
      }
      return Promise.resolve({ status: 200, text: options });
    },
    close: () => real.close(),
  };
}

describe('the OPTIONS answer', () => {
  it('is the upstream’s own body, replayed; a run whose OPTIONS fails keeps the previous one', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ count: 10 });
    const sync = (options: string | null) =>
      runSync(syncConfig(upstream.url), {
        store,
        logger: silentLogger(),
        client: clientWithOptions(upstream.url, options),
      });
    const mirror = await startMirror(store);
    const served = async () => (await fetch(`${mirror.url}${LIST_PATH}`, { method: 'OPTIONS' })).text();

    await sync(UPSTREAM_OPTIONS);
    await mirror.snapshots.refresh();
    expect(await served()).toBe(UPSTREAM_OPTIONS);

    upstream.data.edit(1);
    const second = await sync(null);
    expect(second.counts.changed).toBe(1);
    await mirror.snapshots.refresh();
    expect(await served()).toBe(UPSTREAM_OPTIONS);
  });
});
