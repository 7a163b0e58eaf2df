import { describe, expect, it } from 'vitest';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { imageOrigin, upstreamMedia } from '../../src/web/media-source.js';
import { contentSecurityPolicy } from '../../src/web/render.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

// Regression: image URLs went into the pages' `img-src` as they were; `;` is legal in a URL's host,
// so the upstream could add directives (`http://x;sandbox/y.png` sandboxed the page in Chromium).
const HOSTILE = [
  'http://x;sandbox/y.png',
  'http://x%3Bsandbox/y.png',
  "http://x;script-src'unsafe-inline'/y.png",
  'http://x,y/a.png',
  "http://ex'ample/a.png",
  'http://x{y/a.png',
];

const DIRECTIVES = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  'img-src <images>',
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
];

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('the CSP is built from parsed origins only', () => {
    it.each(HOSTILE)('%s is neither shown nor named in the policy', (url) => {
      expect(upstreamMedia.imageSrc(url)).toBeNull();
      expect(imageOrigin(url)).toBeNull();
      expect(contentSecurityPolicy([url, new URL(url).origin])).toBe(
        DIRECTIVES.join('; ').replace('<images>', "'self'"),
      );
    });

    it('ordinary hosts, Unicode names (as punycode), ports and IPv4 addresses still are', () => {
      expect(imageOrigin('https://Bücher.example:8443/a.png')).toBe('https://xn--bcher-kva.example:8443');
      expect(imageOrigin('http://127.0.0.1:9/a.png')).toBe('http://127.0.0.1:9');
      expect(contentSecurityPolicy(['https://media.example.com'])).toContain(
        "img-src 'self' https://media.example.com;",
      );
    });

    it('a coworker page whose images are hostile keeps exactly its seven directives', async () => {
      const [row] = generateCoworkers(3, 1);
      const entry = { ...row, show_image: true, images: HOSTILE, emoji_file: HOSTILE[0] };
      const store = await fresh();
      await sync(store, await simulatedUpstream({ entries: [entry] }));
      const mirror = await startMirror(store);
      const uuid = String(entry.uuid);
      for (const path of [`/coworkers/${uuid}/`, '/team/', '/changes/']) {
        const res = await fetch(`${mirror.url}${path}`);
        expect(res.status, path).toBe(200);
        expect(res.headers.get('content-security-policy'), path).toBe(
          DIRECTIVES.join('; ').replace('<images>', "'self'"),
        );
      }
    });
  });
});
