import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { WAIT_MS } from '../helpers/patience.js';
import { chromiumBrowser, missing } from '../helpers/requirements.js';
import { mediaRig } from './harness.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const CHROMIUM = chromiumBrowser();

interface Entry {
  name: string;
  emoji_file: string | null;
  images: string[];
}

/** The website: renders the team block from the mirror's list answer, as a site's backend would. */
async function startWebsite(listUrl: string): Promise<string> {
  const server = createServer((_req, res) => {
    void fetch(listUrl).then(async (answer) => {
      const { results } = (await answer.json()) as { results: Entry[] };
      const items = results.map((e) => {
        const emoji = e.emoji_file?.endsWith('.mp4')
          ? `<video class="emoji" src="${e.emoji_file}" muted playsinline preload="auto"></video>`
          : e.emoji_file
            ? `<img class="emoji" src="${e.emoji_file}">`
            : '';
        return `<li>${e.name}${emoji}${e.images.map((src) => `<img src="${src}">`).join('')}</li>`;
      });
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><ul>${items.join('')}</ul>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const ENTRIES = [
  ['Ada Lovelace', 'team/emoji/ada.png', ['team/images/ada_1.jpg', 'team/images/ada_2.webp']],
  ['Grace', 'team/emoji/grace.mp4', ['team/images/grace photo 1.png']],
  ['Linus', null, ['team/images/IMG_1234.jpg']],
] as const;

describe.each(STORE_KINDS)('offline fallback in a real browser on %s', (kind) => {
  const fresh = storeMaker(kind);

  it.skipIf(missing(CHROMIUM))(
    'with the upstream and its media host stopped, a page on the mirror shows every image and plays the mp4 with a seek',
    async () => {
      const rig = await mediaRig(
        (host) => ({
          entries: ENTRIES.map(([name, emoji, images], i) => ({
            uuid: String(i).repeat(32),
            name,
            post: 'Engineer',
            emoji_file: emoji && host.mediaBaseUrl + emoji,
            emoji_file_webm: null,
            show_image: true,
            images: images.map((p) => host.mediaBaseUrl + encodeURI(p)),
          })),
        }),
        await fresh(),
      );
      await rig.sync();
      const expected = new Map(
        rig.upstream.data
          .entries()
          .flatMap((e) => [(e as unknown as Entry).emoji_file, ...(e as unknown as Entry).images])
          .filter((u): u is string => u !== null)
          .map((u) => [u.slice(u.lastIndexOf('/') + 1), rig.host.fileAt(u)?.bytes]),
      );
      await rig.upstream.close();
      await rig.host.close();

      const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: true } });
      const site = await startWebsite(`${mirror.url}${LIST_PATH}`);

      // Byte for byte, through the rewritten URLs.
      const list = (await (await fetch(`${mirror.url}${LIST_PATH}`)).json()) as { results: Entry[] };
      const served = list.results.flatMap((e) => [e.emoji_file, ...e.images]).filter((u) => u !== null);
      expect(served).toHaveLength(expected.size);
      for (const url of served) {
        expect(url.startsWith(`${mirror.url}/media/`)).toBe(true);
        const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
        expect(bytes.equals(expected.get(url.slice(url.lastIndexOf('/') + 1)) ?? Buffer.alloc(1))).toBe(true);
      }

      const browser = await chromium.launch({
        executablePath: CHROMIUM.found ?? '',
        args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required'],
      });
      onTestFinished(() => browser.close());
      const page = await browser.newPage();
      page.setDefaultTimeout(WAIT_MS);
      page.setDefaultNavigationTimeout(WAIT_MS);
      await page.goto(site);
      await page.waitForFunction(`[...document.images].every((img) => img.complete)`);
      const images = await page.evaluate<{ src: string; width: number }[]>(
        `[...document.images].map((img) => ({ src: img.currentSrc, width: img.naturalWidth }))`,
      );
      expect(images).toHaveLength(5);
      for (const image of images) {
        expect(image.src.startsWith(`${mirror.url}/media/`)).toBe(true);
        expect(image.width, image.src).toBeGreaterThan(0);
      }
      // Plays, then seeks to the middle and plays on from there: the mirror's ranges at work.
      const video = await page.evaluate<{
        duration: number;
        played: number;
        seekedTo: number;
        src: string;
      }>(`(async () => {
        const v = document.querySelector('video');
        const once = (name) => new Promise((resolve, reject) => {
          v.addEventListener(name, resolve, { once: true });
          v.addEventListener('error', () => reject(new Error('video error ' + (v.error && v.error.message))), { once: true });
        });
        if (v.readyState < 1) await once('loadedmetadata');
        await v.play();
        while (v.currentTime < 0.3) await new Promise((r) => setTimeout(r, 50));
        const played = v.currentTime;
        const target = Number.isFinite(v.duration) ? v.duration / 2 : 2;
        const seeked = once('seeked');
        v.currentTime = target;
        await seeked;
        return { duration: v.duration, played, seekedTo: v.currentTime, src: v.currentSrc };
      })()`);
      expect(video.src.startsWith(`${mirror.url}/media/`)).toBe(true);
      expect(video.played).toBeGreaterThan(0);
      expect(video.duration).toBeGreaterThan(1);
      expect(Math.abs(video.seekedTo - video.duration / 2)).toBeLessThan(0.5);
      // The browser read the video in ranges, as it does from any media server.
      const counted = await mirror.metrics.registry.getSingleMetricAsString(
        'coworker_mirror_http_requests_total',
      );
      expect(counted).toMatch(/route="media",method="GET",status="206"\} [1-9]/);
    },
    90_000,
  );
});
