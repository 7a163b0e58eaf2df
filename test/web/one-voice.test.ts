import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { buildServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { defaultServerConfig, startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { instantOfLocal, localDay, localInputValue } from '../../src/web/time-zone.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';

/** Issue 22, section 5: one numbering, one zone, one wording on every surface. Every name is invented. */

const TWICE = 'twice000000000000000000000000001';

function entry(post: string, extra: Record<string, unknown> = {}) {
  return {
    uuid: TWICE,
    name: 'Mireille Okafor',
    post,
    emoji_file: null,
    emoji_file_webm: null,
    show_image: false,
    images: [],
    ...extra,
  };
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();

/** A uuid listed twice: run 2 changes appearance 1, run 3 appearance 2, run 4 removes appearance 2. */
async function listedTwice(store: Store) {
  const upstream = await simulatedUpstream({ entries: [] });
  const runs: Record<string, unknown>[][] = [
    [entry('Editor'), entry('Translator')],
    [entry('Senior editor'), entry('Translator')],
    [entry('Senior editor'), entry('Lead translator')],
    [entry('Senior editor')],
  ];
  for (const entries of runs) {
    upstream.data.setEntries(entries);
    await sync(store, upstream);
  }
  return { store, mirror: await startMirror(store) };
}

interface AtomLink {
  '@_href': string;
  '@_rel'?: string;
}
interface AtomEntry {
  id: string;
  title: { '#text': string; '@_type': string };
  updated: string;
  link: AtomLink;
  content: { '#text': string; '@_type': string };
}
interface AtomFeed {
  '@_xmlns': string;
  '@_xml:base': string;
  id: string;
  title: string;
  updated: string;
  author: { name: string };
  link: AtomLink[];
  entry: AtomEntry[];
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** The shape RFC 4287 asks of a feed and its entries, every address absolute under `base`. */
function expectAtomShape(xml: string, base: string): AtomFeed {
  expect(XMLValidator.validate(xml)).toBe(true);
  const { feed } = new XMLParser({ ignoreAttributes: false, isArray: (n) => n === 'entry' }).parse(xml) as {
    feed: AtomFeed;
  };
  expect(feed['@_xmlns']).toBe('http://www.w3.org/2005/Atom');
  expect(feed['@_xml:base']).toBe(`${base}/`);
  expect(feed.id).toBe(`${base}/changes/`);
  expect(feed.updated).toMatch(ISO);
  expect(feed.author.name).not.toBe('');
  expect(feed.link.map((l) => [l['@_rel'], l['@_href'].split('?')[0]])).toEqual([
    ['alternate', `${base}/changes/`],
    ['self', `${base}/api/mirror/changes.atom`],
  ]);
  expect(feed.entry.length).toBeGreaterThan(0);
  for (const entry of feed.entry) {
    expect(entry.id.startsWith(`${base}/coworkers/`)).toBe(true);
    expect(entry.link['@_href']).toMatch(
      new RegExp(`^${base.replaceAll('.', '\\.')}/coworkers/[a-z0-9]{32}/$`),
    );
    expect(entry.updated).toMatch(ISO);
    expect(entry.title['@_type']).toBe('html');
    expect(entry.title['#text']).not.toBe('');
    expect(entry.content['@_type']).toBe('html');
    for (const [, url] of entry.content['#text'].matchAll(/ (?:href|src)="([^"]*)"/g)) {
      expect(url).toMatch(/^https?:\/\//);
    }
  }
  return feed;
}

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('appearances of a uuid listed twice', () => {
    it('are numbered from 1 on the timeline, the coworker page, the CSV and the feed', async () => {
      const { mirror } = await listedTwice(await fresh());
      const timeline = text(await (await fetch(`${mirror.url}/changes/`)).text());
      expect(timeline).toContain('Mireille Okafor (appearance 2) left');
      expect(timeline).toContain('Mireille Okafor (appearance 2): post Translator → Lead translator');
      expect(timeline).toContain('Mireille Okafor: post Editor → Senior editor');
      const csv = parseCsv<Record<string, string>>(
        await (await fetch(`${mirror.url}/api/mirror/changes.csv`)).text(),
        { bom: true, columns: true },
      );
      expect(csv.map((r) => [r.kind, r.appearance, r.sentence])).toEqual([
        ['removed', '2', 'Mireille Okafor (appearance 2) left'],
        ['changed', '2', "Mireille Okafor (appearance 2): post 'Translator' → 'Lead translator'"],
        ['changed', '1', "Mireille Okafor: post 'Editor' → 'Senior editor'"],
        ['added', '2', 'Mireille Okafor (appearance 2) joined as Translator'],
        ['added', '1', 'Mireille Okafor joined as Editor'],
      ]);
      const atom = await (await fetch(`${mirror.url}/api/mirror/changes.atom`)).text();
      expect(atom).toContain('Mireille Okafor (appearance 2) left');
    });

    it('on the coworker page each appearance has its versions together, and a removed one says so', async () => {
      const { mirror } = await listedTwice(await fresh());
      const html = await (await fetch(`${mirror.url}/coworkers/${TWICE}/`)).text();
      const sections = [...html.matchAll(/<section aria-label="(Appearance \d)">([\s\S]*?)<\/section>/g)].map(
        (m) => [m[1], text((m[2] ?? '').replace(/<\/(p|h3|li|dd|dt)>/g, ' '))] as const,
      );
      expect(sections.map(([label]) => label)).toEqual(['Appearance 1', 'Appearance 2']);
      // Listed once now: its card needs no number.
      expect(text(html.slice(html.indexOf('As listed now'), html.indexOf('Every version')))).not.toContain(
        'Appearance',
      );
      const [first, second] = sections.map(([, body]) => body);
      expect(first).not.toContain('Removed');
      expect(first?.match(/From run \d/g)).toEqual(['From run 2', 'From run 1']);
      expect(first).toContain('post: Editor → Senior editor');
      expect(second).toMatch(/^Appearance 2 Removed in run 4 \(.+\)\. From run 3 /);
      expect(second?.match(/From run \d/g)).toEqual(['From run 3', 'From run 1']);
      expect(second).toContain('post: Translator → Lead translator');
    });
  });

  describe('the Atom feed', () => {
    it('has an xml:base and absolute links from the request origin, in the shape RFC 4287 asks', async () => {
      const { mirror } = await listedTwice(await fresh());
      const atom = await (await fetch(`${mirror.url}/api/mirror/changes.atom`)).text();
      const feed = expectAtomShape(atom, mirror.url);
      expect(feed.entry).toHaveLength(5);
      expect(feed.entry[0]?.content['#text']).toContain(`href="${mirror.url}/coworkers/${TWICE}/"`);
    });

    it('takes PUBLIC_BASE_URL, its path included, for every address', async () => {
      const { store } = await listedTwice(await fresh());
      const base = 'https://mirror.example.com/team-mirror';
      const mirror = await startMirror(store, { publicBaseUrl: base });
      const atom = await (await fetch(`${mirror.url}/api/mirror/changes.atom`)).text();
      expectAtomShape(atom, base);
      expect(atom).not.toContain(mirror.url);
    });
  });

  /** Runs 1–4 moved to fixed instants around midnight UTC: 22:30, 23:30 on 2 March, 00:30, 01:30 on 3 March. */
  const RUN_AT = [
    '2026-03-02T22:30:00.000Z',
    '2026-03-02T23:30:00.000Z',
    '2026-03-03T00:30:00.000Z',
    '2026-03-03T01:30:00.000Z',
  ];

  async function pinRunTimes(store: Store): Promise<void> {
    for (const [i, at] of RUN_AT.entries()) {
      await storeRows(
        store,
        `update runs set started_at = '${at}', finished_at = '${at}' where id = ${i + 1}`,
      );
    }
  }

  async function pagesIn(store: Store, timeZone: string): Promise<(path: string) => Promise<string>> {
    const server = await buildServer({
      store,
      logger: silentLogger(),
      config: { server: defaultServerConfig },
      web: { timeZone },
    });
    onTestFinished(() => server.close());
    const url = await server.listen(0, '127.0.0.1');
    return async (path) => (await fetch(`${url}${path}`)).text();
  }

  describe('one zone on one screen', () => {
    it('the timeline groups by the day in TZ, says the zone, and shows times in it', async () => {
      const { store } = await listedTwice(await fresh());
      await pinRunTimes(store);
      const page = await pagesIn(store, 'Europe/Berlin');
      const html = await page('/changes/');
      const days = [...html.matchAll(/<section class="day" aria-label="([^"]+)">([\s\S]*?)<\/section>/g)].map(
        (m) => [m[1], [...(m[2] ?? '').matchAll(/>Run (\d)</g)].map((r) => Number(r[1]))] as const,
      );
      // In Berlin (UTC+1) run 2 at 23:30 UTC is already 3 March: one day, one zone.
      expect(days).toEqual([
        ['Tuesday, 3 March 2026 (Europe/Berlin)', [4, 3, 2]],
        ['Monday, 2 March 2026 (Europe/Berlin)', [1]],
      ]);
      expect(html).toContain('<time datetime="2026-03-02T23:30:00.000Z">2026-03-03 00:30</time>');
      expect(text(html)).toContain('Times are in Europe/Berlin.');
      expect(html).not.toContain('UTC');
      // The From/To filters take days of the zone too: 3 March in Berlin starts at 23:00 UTC on 2 March.
      const filtered = await page('/changes/?from=2026-03-03&to=2026-03-03');
      expect([...filtered.matchAll(/>Run (\d)</g)].map((r) => Number(r[1]))).toEqual([4, 3, 2]);
    });

    it("the team page's run picker, the sentence under it and the as-of picker use that zone", async () => {
      const { store } = await listedTwice(await fresh());
      await pinRunTimes(store);
      const page = await pagesIn(store, 'Europe/Berlin');
      // 01:00 in Berlin is 00:00 UTC: after run 2 (23:30 UTC), before run 3 (00:30 UTC).
      const html = await page('/team/?as_of=2026-03-03T01:00');
      expect(html).toContain('<input type="datetime-local" name="as_of" value="2026-03-03T01:00"/>');
      expect(text(html)).toContain('As of (date and time in Europe/Berlin)');
      expect(text(html)).toContain('run 2, 2026-03-03 00:30 (2 entries)');
      expect(text(html)).toContain('Or after run (times in Europe/Berlin)');
      expect(text(html)).toMatch(/as served after run 2, fetched 2026-03-03 00:30: 2 cards/);
      expect(html).not.toContain('UTC');
      // A date alone is the whole day in the zone; an ISO time with an offset is that instant.
      expect(text(await page('/team/?as_of=2026-03-02'))).toContain('as served after run 1,');
      expect(await page('/team/?as_of=2026-03-02T23:45:00Z')).toContain('value="2026-03-03T00:45"');
    });
  });

  describe('wall times of a zone', () => {
    it.each([
      ['2026-03-03', 'start', 'Europe/Berlin', '2026-03-02T23:00:00.000Z'],
      ['2026-03-03', 'end', 'Europe/Berlin', '2026-03-03T22:59:59.999Z'],
      ['2026-03-03T09:10', 'end', 'Europe/Berlin', '2026-03-03T08:10:00.000Z'],
      ['2026-07-01T09:10:05', 'start', 'Europe/Berlin', '2026-07-01T07:10:05.000Z'],
      ['2026-03-03T09:10', 'start', 'America/Los_Angeles', '2026-03-03T17:10:00.000Z'],
      // 02:30 on 29 March does not exist in Berlin (clocks jump 02:00 → 03:00): the later instant.
      ['2026-03-29T02:30', 'start', 'Europe/Berlin', '2026-03-29T01:30:00.000Z'],
      ['2026-02-31', 'start', 'Europe/Berlin', null],
      ['2026-03-03T09:10Z', 'start', 'Europe/Berlin', null],
    ] as const)('%s (%s of the day) in %s is %s', (text, edge, zone, expected) => {
      expect(instantOfLocal(text, zone, edge)?.toISOString() ?? null).toBe(expected);
    });

    it('an instant reads back as the wall time the picker sent', () => {
      const instant = instantOfLocal('2026-10-25T02:30', 'Europe/Berlin', 'start');
      expect(localInputValue(instant?.toISOString() ?? '', 'Europe/Berlin')).toBe('2026-10-25T02:30');
      expect(localDay('2026-03-02T23:30:00Z', 'Europe/Berlin')).toBe('2026-03-03');
    });
  });
});
