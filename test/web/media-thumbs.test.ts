import { chromium, type Page } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { WAIT_MS } from '../helpers/patience.js';
import { chromiumBrowser, missing } from '../helpers/requirements.js';
import { mediaRig, type MediaRig, type RigStore } from '../media/harness.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

/**
 * Issue 22, section 5: the pages' and the feed's thumbnails come from the mirror whenever it holds
 * the bytes, so the old side of an image change still shows with the upstream's media host down;
 * every thumbnail is captioned with its file. Every name is invented.
 */

const CHROMIUM = chromiumBrowser();
const PIA = 'pia00000000000000000000000000001';
const QUIN = 'quin0000000000000000000000000002';

function person(uuid: string, name: string, emoji: string, images: string[], base: string) {
  return {
    uuid,
    name,
    post: 'Engineer',
    emoji_file: base + emoji,
    emoji_file_webm: null,
    show_image: true,
    images: images.map((path) => base + path),
  };
}

/**
 * Run 1, then run 2: Pia's photo changes address (p_1.png → p_2.png) and new bytes appear behind
 * her emoji's same address (media_changed); Quin's video emoji changes address. Then the upstream
 * and its media host stop.
 */
async function mirroredThenOffline(store: RigStore): Promise<MediaRig> {
  const rig = await mediaRig(
    (host) => ({
      entries: [
        person(PIA, 'Pia Nyström', 'team/emoji/pia.png', ['team/images/p_1.png'], host.mediaBaseUrl),
        person(QUIN, 'Quin Adebayo', 'team/emoji/quin.mp4', [], host.mediaBaseUrl),
      ],
    }),
    store,
  );
  await rig.sync();
  const base = rig.host.mediaBaseUrl;
  rig.upstream.data.setEntries([
    person(PIA, 'Pia Nyström', 'team/emoji/pia.png', ['team/images/p_2.png'], base),
    person(QUIN, 'Quin Adebayo', 'team/emoji/quin-wave.mp4', [], base),
  ]);
  rig.host.bump(`${base}team/emoji/pia.png`);
  await rig.sync();
  await rig.upstream.close();
  await rig.host.close();
  return rig;
}

async function browserPage(): Promise<Page> {
  const browser = await chromium.launch({ executablePath: CHROMIUM.found ?? '', args: ['--no-sandbox'] });
  onTestFinished(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
  page.setDefaultTimeout(WAIT_MS);
  page.setDefaultNavigationTimeout(WAIT_MS);
  return page;
}

interface Shown {
  src: string;
  width: number;
  caption: string;
}

/** Every thumbnail of the timeline once the browser settled each: where it loaded from, whether it did, its caption. */
async function thumbnails(page: Page): Promise<Shown[]> {
  // Not page.waitForFunction: it polls a text predicate by eval inside the page, which the pages'
  // CSP (script-src 'self') refuses whenever the first check comes before the images settled (seen
  // under load). page.evaluate runs through the debugging protocol, which the CSP does not govern.
  while (!(await page.evaluate<boolean>(`[...document.images].every((img) => img.complete)`)))
    await new Promise((resolve) => setTimeout(resolve, 50));
  return page.evaluate<Shown[]>(
    `[...document.querySelectorAll('.thumb')].map((t) => {
      const img = t.querySelector('img');
      return { src: img.getAttribute('src'), width: img.naturalWidth, caption: t.innerText.trim() };
    })`,
  );
}

describe.skipIf(missing(CHROMIUM)).each(STORE_KINDS)('thumbnails with the media host down on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('the before and after images of every change load from the mirror; videos and files are named', async () => {
    const rig = await mirroredThenOffline(await fresh());
    const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: false } });
    const page = await browserPage();
    await page.goto(`${mirror.url}/changes/?kind=changed`);
    const changed = await thumbnails(page);
    // Regression (issue 22): the old side pointed at the upstream's media host, dead when it is down.
    const images = await page.evaluate<[string, number][]>(
      `[...document.images].map((img) => [img.getAttribute('src'), img.naturalWidth])`,
    );
    expect(images.filter(([src, width]) => !src.startsWith('/media/') || width === 0)).toEqual([]);
    expect(changed.map((t) => t.caption)).toEqual(['p_1.png', 'p_2.png']);
    for (const thumb of changed) {
      expect(thumb.src).toMatch(/^\/media\/[0-9a-f]{64}\//);
      expect(thumb.width, thumb.caption).toBeGreaterThan(0);
    }
    const text = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
    expect(text).toContain(
      'Quin Adebayo: emoji file quin.mp4 (video, not shown) → quin-wave.mp4 (video, not shown)',
    );

    await page.goto(`${mirror.url}/changes/?kind=media_changed`);
    const media = await thumbnails(page);
    expect(media.map((t) => t.caption)).toEqual(['pia.png', 'pia.png']);
    const [before, after] = media;
    // The same address on both sides, other bytes: each side is its own file on the mirror.
    expect(before?.src).not.toBe(after?.src);
    for (const thumb of media) {
      expect(thumb.src).toMatch(/^\/media\/[0-9a-f]{64}\/pia\.png$/);
      expect(thumb.width).toBeGreaterThan(0);
    }
    expect(await page.locator('main').innerText()).toContain(
      'Pia Nyström: new emoji file bytes at the same address (pia.png)',
    );
  }, 60_000);

  it("the feed's thumbnails are the mirror's, at absolute addresses", async () => {
    const rig = await mirroredThenOffline(await fresh());
    const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: false } });
    const atom = await (await fetch(`${mirror.url}/api/mirror/changes.atom`)).text();
    const sources = [...atom.matchAll(/<img [^>]*src="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(sources).toHaveLength(4);
    for (const src of sources) {
      expect(src.startsWith(`${mirror.url}/media/`)).toBe(true);
      expect((await fetch(src)).status).toBe(200);
    }
  }, 60_000);

  it('a thumbnail that cannot load still shows its file name, in full', async () => {
    const rig = await mirroredThenOffline(await fresh());
    // No media folder given: the pages point at the stopped host.
    const mirror = await startMirror(rig.store);
    const page = await browserPage();
    await page.goto(`${mirror.url}/changes/?kind=changed`);
    const shown = await thumbnails(page);
    expect(shown.map((t) => [t.caption, t.width])).toEqual([
      ['p_1.png', 0],
      ['p_2.png', 0],
    ]);
    const caption = page.locator('.thumb-name').first();
    expect(await caption.isVisible()).toBe(true);
    const box = await caption.boundingBox();
    // One line the width of its text, not an alt text cut to a 48 px box.
    expect(box?.height ?? 0).toBeLessThan(24);
  }, 60_000);
});
