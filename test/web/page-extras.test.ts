import { describe, expect, it, onTestFinished } from 'vitest';
import { buildServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { defaultServerConfig, startMirror } from '../helpers/mirror-server.js';
import { mediaRig, rigWithMediaChange } from '../media/harness.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { webhookReceiver } from '../helpers/webhook-receiver.js';
import { commitRunWithChange } from '../helpers/store-runs.js';
import { deliverySettings, deliveryWorker } from '../helpers/webhook-runs.js';
import type { Store } from '../../src/db/store.js';
import type { StatusSource } from '../../src/web/status-source.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

function statusSource(mode: 'demo' | 'upstream'): StatusSource {
  return {
    upstream: () => ({ mode, url: 'http://127.0.0.1:8766' }),
    nextRunAt: () => null,
    randomDelayMs: 0,
    syncRunning: () => false,
  };
}

async function pages(store: Store, mode: 'demo' | 'upstream') {
  const server = await buildServer({
    store,
    logger: silentLogger(),
    config: { server: defaultServerConfig },
    web: { status: statusSource(mode) },
  });
  onTestFinished(() => server.close());
  const url = await server.listen(0, '127.0.0.1');
  return async (path: string) => {
    const res = await fetch(`${url}${path}`);
    return { status: res.status, html: await res.text() };
  };
}

const text = (html: string) => html.replace(/<[^>]+>/g, '');

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('what every page and the status page tell beyond the history', () => {
    it('in the demo every page says the data is invented; a real mirror says nothing of the kind', async () => {
      const store = await fresh();
      await sync(store, await simulatedUpstream({ seed: 2, count: 5 }));
      const demo = await pages(store, 'demo');
      for (const path of ['/', '/changes/', '/coworkers/', '/team/', '/runs/', '/runs/1/']) {
        const page = await demo(path);
        expect(page.status, path).toBe(200);
        expect(text(page.html), path).toContain('Demo: this mirror copies the built-in simulated upstream');
      }
      const real = await (await pages(store, 'upstream'))('/changes/');
      expect(real.status).toBe(200);
      expect(text(real.html)).toContain('What changed, and when');
      expect(text(real.html)).not.toContain('Demo:');
    });

    it('the status page counts webhook deliveries and names endpoints a 410 disabled', async () => {
      const store = await fresh();
      const ok = await webhookReceiver(null);
      const gone = await webhookReceiver(null);
      gone.behave(() => ({ kind: 'status', status: 410, body: 'no such hook' }));
      await commitRunWithChange(store, [ok.url, gone.url]);
      await deliveryWorker(store, deliverySettings([ok.url, gone.url])).drain(5_000);
      const status = text((await (await pages(store, 'upstream'))('/')).html);
      expect(status).toContain('Webhooks1 delivered, 1 waiting, 0 failed; 1 endpoint disabled by 410 Gone');
    });

    it('without any webhook ever queued the status page says nothing of them', async () => {
      const store = await fresh();
      await sync(store, await simulatedUpstream({ seed: 2, count: 5 }));
      const status = await (await pages(store, 'upstream'))('/');
      expect(status.status).toBe(200);
      expect(text(status.html)).toContain('The mirror at a glance');
      expect(text(status.html)).not.toContain('Webhooks');
    });
  });

  describe('thumbnails of mirrored media', () => {
    it('come from the mirror itself, so the pages work offline and their CSP allows only the mirror', async () => {
      const rig = await mediaRig({ count: 4 }, await fresh());
      await rig.sync();
      const mirror = await startMirror(rig.store, {
        media: { dir: rig.media.dir, rewrite: false },
      });
      const res = await fetch(`${mirror.url}/team/`);
      const html = await res.text();
      const sources = [...html.matchAll(/<img [^>]*src="([^"]+)"/g)].map((m) => m[1] ?? '');
      expect(sources.length).toBeGreaterThan(0);
      for (const src of sources) expect(src).toMatch(/^\/media\/[0-9a-f]{64}\/[^/]+$/);
      expect(res.headers.get('content-security-policy')).toContain("img-src 'self';");
      for (const src of sources) expect((await fetch(`${mirror.url}${src}`)).status).toBe(200);
    });
  });

  describe('the timeline with media', () => {
    it('says in words when new bytes appear behind the same media URL (media_changed)', async () => {
      const rig = await rigWithMediaChange(4, await fresh());
      const mirror = await startMirror(rig.store);
      const items = [
        ...(await (await fetch(`${mirror.url}/changes/?kind=media_changed`)).text()).matchAll(
          /<li\b[^>]*>([\s\S]*?)<\/li>/g,
        ),
      ]
        .map((m) =>
          text(m[1] ?? '')
            .replace(/\s+/g, ' ')
            .trim(),
        )
        .filter((t) => t.includes('bytes'));
      expect(items).toHaveLength(1);
      expect(items[0]).toMatch(/^\S.*: new (emoji file|images?) bytes at the same address/);
    });
  });
});
