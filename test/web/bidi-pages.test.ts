import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';
import { chromium } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { bidiLeaks, htmlAsBidiText, htmlAttributeTexts } from '../helpers/bidi.js';
import { startMirror } from '../helpers/mirror-server.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { chromiumBrowser, missing } from '../helpers/requirements.js';
import { oncePerFile, type Defer } from '../helpers/scope.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';

// Regression: a name holding U+202E (RIGHT-TO-LEFT OVERRIDE) could turn the words after it around
// on the pages, in the feed and in the CSV's sentences. The pages put names in `<bdi>`, but a
// stray U+2069 in the name ended that isolate (a browser isolates `<bdi>` as FSI…PDI) and let the
// override after it out; posts, field names and file names were not isolated at all. Every piece
// of upstream text is now isolated with its controls balanced inside it, on every surface.

/** A stray end (to close the field's isolate early), then an override and an isolate left open. */
const NAME = 'Ann \u2069\u202eevil\u2066';
const POST = 'QA \u2069\u202elead';
/** A field the contract does not name, called with an override. */
const FIELD = 'nick\u202ename';

/** The mirror's own words on the pages, the feed and the CSV, which no field may turn around. */
const OURS = ['joined', 'left', '→', 'Run ', 'run ', 'coworker mirror', 'Times are in', 'Changes', 'Status'];

const [a, b, c] = generateCoworkers(41, 3);
if (!a || !b || !c) throw new Error('three coworkers were generated');
/** The coworker whose name, post and unnamed field hold the controls. */
const HOSTILE_UUID = a.uuid;

async function hostileHistory(store: Store, defer: Defer) {
  if (!a || !b || !c) throw new Error('three coworkers were generated');
  const hostile = { ...a, name: NAME, post: POST, [FIELD]: '\u2066one' };
  const upstream = await simulatedUpstream({ entries: [hostile, b] }, defer);
  await sync(store, upstream);
  // The hostile coworker changes the unnamed field and its post; another joins with the same name; b leaves.
  const changed = { ...hostile, post: `${POST}\u2066 2`, [FIELD]: '\u202etwo\u2069' };
  upstream.data.setEntries([changed, { ...c, name: NAME, post: POST }]);
  await sync(store, upstream);
  // A run that fails on a value the upstream sent: its message quotes the value, override and all.
  upstream.data.setEntries([changed, { ...c, name: NAME, post: POST, images: ['\u202ejavascript'] }]);
  await sync(store, upstream).catch(() => undefined);
}

const PAGES = [
  '/',
  '/changes/',
  '/coworkers/?status=all',
  `/coworkers/${HOSTILE_UUID}/`,
  '/team/',
  '/team/?run=1',
  '/runs/2/',
  '/runs/3/',
];

describe.each(STORE_KINDS)('upstream text cannot turn the words around it, on %s', (kind) => {
  const fresh = storeMaker(kind);
  const rig = oncePerFile(async (defer) => {
    const store = await fresh(defer);
    await hostileHistory(store, defer);
    return { mirror: await startMirror(store, { defer }) };
  });

  it('pages: every field in <bdi> keeps its controls; titles and attributes are isolated', async () => {
    const { mirror } = rig();
    for (const path of PAGES) {
      const html = await (await fetch(`${mirror.url}${path}`)).text();
      expect(html, path).toContain('\u202e');
      expect(bidiLeaks(htmlAsBidiText(html), OURS), path).toEqual([]);
      for (const text of htmlAttributeTexts(html))
        expect(bidiLeaks(text, OURS), `${path}: ${text}`).toEqual([]);
    }
  });

  it('the Atom feed: entry titles (text) and contents (HTML) keep every field to itself', async () => {
    const xml = await (await fetch(`${rig().mirror.url}/api/mirror/changes.atom`)).text();
    const { feed } = new XMLParser({ ignoreAttributes: false, isArray: (n) => n === 'entry' }).parse(xml) as {
      feed: { entry: { title: { '#text': string }; content: { '#text': string } }[] };
    };
    expect(feed.entry.length).toBeGreaterThan(4);
    for (const entry of feed.entry) {
      const title = htmlAsBidiText(entry.title['#text']);
      expect(bidiLeaks(title, OURS), title).toEqual([]);
      expect(bidiLeaks(htmlAsBidiText(entry.content['#text']), OURS)).toEqual([]);
    }
    expect(xml).toContain('\u202e');
  });

  it("the CSV: the sentence isolates each field; the data columns keep the upstream's characters", async () => {
    const csv = parseCsv<Record<string, string>>(
      await (await fetch(`${rig().mirror.url}/api/mirror/changes.csv`)).text(),
      { bom: true, columns: true },
    );
    expect(csv.length).toBeGreaterThan(4);
    for (const row of csv) expect(bidiLeaks(row.sentence ?? '', OURS), row.sentence).toEqual([]);
    // A CSV is data: the name, field and values are the upstream's, as the JSON export keeps them.
    expect(csv.filter((r) => r.field === FIELD).map((r) => [r.name, r.old, r.new])).toEqual([
      [NAME, '\u2066one', '\u202etwo\u2069'],
    ]);
  });
});

const CHROMIUM = chromiumBrowser();

describe.skipIf(missing(CHROMIUM))('in a real browser (Chromium)', () => {
  const fresh = storeMaker('sqlite');
  const rig = oncePerFile(async (defer) => {
    const store = await fresh(defer);
    await hostileHistory(store, defer);
    const mirror = await startMirror(store, { defer });
    const browser = await chromium.launch({ executablePath: CHROMIUM.found ?? '', args: ['--no-sandbox'] });
    defer(() => browser.close());
    return { mirror, browser };
  });

  it.each(['/changes/', '/', `/coworkers/${HOSTILE_UUID}/`])(
    '%s lays out every word of its own left to right',
    async (path) => {
      const { mirror, browser } = rig();
      const page = await browser.newPage();
      onTestFinished(() => page.close());
      await page.goto(`${mirror.url}${path}`);
      // Each text node outside a <bdi>: its ASCII letters on one line must run left to right; a
      // field's override that reached it would draw it from right to left.
      const reversed = await page.evaluate(() => {
        const found: string[] = [];
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
          const text = node.textContent ?? '';
          if (node.parentElement?.closest('bdi, script, style') || !/[a-z]{2}/i.test(text)) continue;
          let last: { x: number; top: number } | null = null;
          for (let i = 0; i < text.length; i++) {
            if (!/[a-z]/i.test(text.charAt(i))) continue;
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const rect = range.getBoundingClientRect();
            if (rect.width === 0) continue;
            const here = { x: rect.left, top: Math.round(rect.top) };
            if (last !== null && last.top === here.top && here.x < last.x) {
              found.push(text.trim());
              break;
            }
            last = here;
          }
        }
        return found;
      });
      expect(reversed).toEqual([]);
    },
  );
});
