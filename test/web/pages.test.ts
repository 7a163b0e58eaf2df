import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { defaultServerConfig, startMirror } from '../helpers/mirror-server.js';
import { oncePerFile } from '../helpers/scope.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { BIG_POST, buildPageHistory, HOSTILE_NAME, RTL_NAME, TESS_NAME, UUID } from './page-history.js';

async function get(url: string): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);
  // One history for the file: four real syncs are most of each test's time, and no test writes to it.
  // Each test starts its own server over it, so no server state (caches, metrics) crosses tests.
  const history = oncePerFile(async (defer) => buildPageHistory(defer, await fresh(defer)));

  /** HOSTILE_NAME as HTML text: shown, never run. */
  const ESCAPED_HOSTILE_NAME = '&lt;/script>&lt;script>alert(1)&lt;/script>';

  const PAGES = ['/', '/changes/', '/coworkers/', `/coworkers/${UUID.jose}/`, '/team/', '/runs/', '/runs/2/'];

  describe('web pages over a real history', () => {
    it('every page answers HTML with a strict CSP that allows images from the media host only', async () => {
      const mirror = await startMirror(history().store);
      for (const path of PAGES) {
        const page = await get(mirror.url + path);
        expect(page.status, path).toBe(200);
        expect(page.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
        expect(page.headers.get('x-frame-options'), path).toBe('DENY');
        expect(page.headers.get('x-content-type-options'), path).toBe('nosniff');
        const csp = page.headers.get('content-security-policy') ?? '';
        expect(csp, path).toContain("default-src 'none'");
        expect(csp, path).toContain("script-src 'self'");
        expect(csp, path).toMatch(
          new RegExp(`img-src 'self'( ${history().mediaUrl.replaceAll('.', '\\.')})?;`),
        );
        expect(page.text, path).not.toMatch(/<script>|<style>| style=| on[a-z]+=/);
      }
    });

    it('the timeline says what happened in sentences with names', async () => {
      const mirror = await startMirror(history().store);
      const text = (await get(`${mirror.url}/changes/`)).text.replace(/<[^>]+>/g, '');
      expect(text).toContain('Zoë joined as QA engineer');
      expect(text).toContain('José Álvarez: post qa engineer → QA lead');
      expect(text).toContain('Kate left');
      expect(text).toContain('Seán returned');
      const filtered = await get(`${mirror.url}/changes/?kind=changed&field=post&name=jose`);
      expect(filtered.status).toBe(200);
      const filteredText = filtered.text.replace(/<[^>]+>/g, '');
      expect(filteredText).toContain('José Álvarez: post qa engineer → QA lead');
      expect(filteredText).not.toContain('Zoë joined');
    });

    it.each([
      ['/changes/', ESCAPED_HOSTILE_NAME],
      ['/coworkers/?status=all', ESCAPED_HOSTILE_NAME],
      ['/team/?run=3', ESCAPED_HOSTILE_NAME],
      [`/coworkers/${UUID.big}/`, '(cut, 1,048,576 bytes in all)'],
    ])('hostile upstream text is escaped and bounded: %s shows %s', async (path, shown) => {
      const mirror = await startMirror(history().store);
      const page = await get(mirror.url + path);
      expect(page.status).toBe(200);
      expect(page.text).toContain(shown);
      expect(page.text).not.toContain(HOSTILE_NAME);
      expect(page.text).not.toContain(BIG_POST.slice(0, 4096));
      expect(page.text.length).toBeLessThan(200_000);
    });

    it('a right-to-left name is isolated in the timeline', async () => {
      const mirror = await startMirror(history().store);
      const changes = await get(`${mirror.url}/changes/`);
      expect(changes.status).toBe(200);
      expect(changes.text).toContain(`<bdi>${RTL_NAME}</bdi>`);
    });

    it('bad parameters answer 400 naming them, unknown coworkers and runs 404', async () => {
      const mirror = await startMirror(history().store);
      const bad = await get(`${mirror.url}/changes/?from=yesterday`);
      expect(bad.status).toBe(400);
      expect(bad.text).toContain('The parameter “from” is not right');
      expect((await get(`${mirror.url}/coworkers/${'0'.repeat(32)}/`)).status).toBe(404);
      expect((await get(`${mirror.url}/runs/99/`)).status).toBe(404);
      expect((await get(`${mirror.url}/team/?run=4`)).status).toBe(404);
    });

    it("the list endpoint and other paths stay the DRF site's", async () => {
      const mirror = await startMirror(history().store);
      const list = await get(`${mirror.url}/api/model/team-block-coworker/list/`);
      expect(list.status).toBe(200);
      expect(list.headers.get('content-type')).toBe('application/json');
      expect(list.headers.get('content-security-policy')).toBeNull();
      for (const path of ['/changes', '/team', '/runs/2', '/static/x.css', '/favicon.ico']) {
        const other = await get(mirror.url + path);
        expect(other.status, path).toBe(404);
        expect(other.headers.get('content-security-policy'), path).toBeNull();
      }
    });

    it('the status page tells the last run failed, what to do, and what is still served', async () => {
      const mirror = await startMirror(history().store);
      const text = (await get(`${mirror.url}/`)).text.replace(/<[^>]+>/g, '');
      expect(text).toContain('The last run failed (UPSTREAM_SCHEMA)');
      expect(text).toContain('The previous snapshot is still served.');
      expect(text).toContain('from run 3');
    });
  });

  describe('an empty mirror', () => {
    it('every page answers and says nothing is mirrored yet; the feeds are empty', async () => {
      const mirror = await startMirror(await fresh());
      for (const path of ['/', '/changes/', '/coworkers/', '/team/', '/team/?as_of=2026-03-03', '/runs/']) {
        expect((await get(mirror.url + path)).status, path).toBe(200);
      }
      const status = (await get(`${mirror.url}/`)).text.replace(/<[^>]+>/g, '');
      expect(status).toContain('No snapshot is served yet: no sync has succeeded.');
      const team = (await get(`${mirror.url}/team/?as_of=2026-03-03`)).text.replace(/<[^>]+>/g, '');
      expect(team).toContain('Nothing was mirrored yet at');
      const atom = (await get(`${mirror.url}/api/mirror/changes.atom`)).text;
      expect(XMLValidator.validate(atom)).toBe(true);
      const csv = (await get(`${mirror.url}/api/mirror/changes.csv`)).text;
      expect(parseCsv(csv, { bom: true })).toEqual([
        ['id', 'run', 'at', 'uuid', 'appearance', 'name', 'kind', 'field', 'old', 'new', 'sentence'],
      ]);
    });
  });

  describe('the coworker directory', () => {
    it('after a new run, the request that notices it already gets the new run', async () => {
      const store = await fresh();
      const upstream = await simulatedUpstream({ seed: 3, count: 12 });
      await sync(store, upstream);
      const mirror = await startMirror(store);
      const read = async () =>
        (await get(`${mirror.url}/coworkers/?status=all`)).text.replace(/<[^>]+>/g, '');
      expect(await read()).toContain('12 matches as of run 1');
      upstream.data.add(3);
      await sync(store, upstream);
      // The first request after a new run rebuilds the directory before it answers: never a lag.
      expect(await read()).toContain('15 matches as of run 2');
      expect(await read()).toContain('15 matches as of run 2');
    });
  });

  describe('the status page with a schedule', () => {
    it('shows the mode, the upstream with its credentials masked, and the next run', async () => {
      const server = await buildServer({
        store: history().store,
        logger: silentLogger(),
        config: { server: defaultServerConfig },
        web: {
          status: {
            upstream: () => ({ mode: 'upstream', url: 'https://***:***@team.example.com' }),
            nextRunAt: () => new Date('2030-01-01T10:20:00Z'),
            randomDelayMs: 60_000,
            syncRunning: () => true,
          },
          timeZone: 'Asia/Kolkata',
        },
      });
      const url = await server.listen(0, '127.0.0.1');
      onTestFinished(() => server.close());
      const html = (await get(`${url}/`)).text;
      const text = html.replace(/<[^>]+>/g, '');
      expect(text).toContain('mirroring the upstream');
      expect(text).toContain('https://***:***@team.example.com');
      expect(text).toContain('a run is in progress now');
      // In the pages' one zone, which the page names.
      expect(html).toContain('<time datetime="2030-01-01T10:20:00.000Z">2030-01-01 15:50</time>');
      expect(text).toContain('Times are in Asia/Kolkata.');
      expect(text).toContain('may start up to 1 minute later');
    });

    it('without one (serve), says this process does not sync', async () => {
      const mirror = await startMirror(history().store);
      const text = (await get(`${mirror.url}/`)).text.replace(/<[^>]+>/g, '');
      expect(text).toContain('serving only');
      expect(text).toContain('none scheduled here');
    });
  });

  describe('feeds', () => {
    it('Atom: well-formed XML, one entry per change with its sentence, hostile names intact', async () => {
      const mirror = await startMirror(history().store);
      const atom = await get(`${mirror.url}/api/mirror/changes.atom?page_size=500`);
      expect(atom.status).toBe(200);
      expect(atom.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
      expect(XMLValidator.validate(atom.text)).toBe(true);
      const parsed = new XMLParser({ ignoreAttributes: false }).parse(atom.text) as {
        feed: {
          '@_xmlns': string;
          id: string;
          title: string;
          updated: string;
          entry: Record<string, unknown>[];
        };
      };
      expect(parsed.feed['@_xmlns']).toBe('http://www.w3.org/2005/Atom');
      const count = (await history().store.listChanges({ limit: 10_000 })).length;
      expect(parsed.feed.entry).toHaveLength(count);
      // Titles are `type="html"`: the sentence escaped as HTML text.
      const titles = parsed.feed.entry.map((e) => {
        const title = e.title as { '#text': string; '@_type': string };
        expect(title['@_type']).toBe('html');
        return title['#text']
          .replaceAll('&lt;', '<')
          .replaceAll('&gt;', '>')
          .replaceAll('&quot;', '"')
          .replaceAll('&amp;', '&');
      });
      expect(titles).toContain('Zoë joined as QA engineer');
      expect(titles).toContain("José Álvarez: post 'qa engineer' → 'QA lead'");
      expect(titles).toContain(`${HOSTILE_NAME} joined as Red team\u2028lead`);
      expect(titles.some((t) => t.startsWith('Tess ]]> \uFFFD Bell'))).toBe(true);
      for (const entry of parsed.feed.entry) {
        expect(Object.keys(entry)).toEqual(
          expect.arrayContaining(['title', 'id', 'link', 'updated', 'content']),
        );
        // Regression (issue 22): links in entry content were relative, dead in mail digests and chat.
        const content = String((entry.content as { '#text'?: string })['#text'] ?? entry.content);
        expect(content).not.toMatch(/ (href|src)="\//);
      }
      expect(atom.text).toContain(`href="${mirror.url}/coworkers/`);
    });

    it('Atom and CSV take the API filters; a bad one answers 400 naming it', async () => {
      const mirror = await startMirror(history().store);
      const bad = await get(`${mirror.url}/api/mirror/changes.csv?kind=moved`);
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.text)).toMatchObject({ parameter: 'kind' });
      const csv = await get(`${mirror.url}/api/mirror/changes.csv?kind=removed`);
      const rows = parseCsv<Record<string, string>>(csv.text, { bom: true, columns: true });
      expect(rows.map((r) => r.name).sort()).toEqual(['Kate', 'Seán']);
    });

    it('CSV: BOM, header row, CRLF, names and non-ASCII intact when read back', async () => {
      const mirror = await startMirror(history().store);
      const csv = await get(`${mirror.url}/api/mirror/changes.csv?page_size=500`);
      expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
      const bytes = Buffer.from(
        await (await fetch(`${mirror.url}/api/mirror/changes.csv?page_size=500`)).arrayBuffer(),
      );
      expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      expect(bytes.includes('\r\n')).toBe(true);
      const rows: string[][] = parseCsv(csv.text, { bom: true });
      expect(rows[0]).toEqual([
        'id',
        'run',
        'at',
        'uuid',
        'appearance',
        'name',
        'kind',
        'field',
        'old',
        'new',
        'sentence',
      ]);
      const records = parseCsv<Record<string, string>>(csv.text, { bom: true, columns: true });
      const jose = records.find((r) => r.uuid === UUID.jose && r.kind === 'changed');
      expect(jose).toMatchObject({ name: 'José Álvarez', field: 'post', old: 'qa engineer', new: 'QA lead' });
      expect(records.find((r) => r.uuid === UUID.rtl)?.name).toBe(RTL_NAME);
      expect(records.find((r) => r.uuid === UUID.tess)?.name).toBe(TESS_NAME);
      expect(records.find((r) => r.uuid === UUID.script)?.name).toBe(HOSTILE_NAME);
      const big = records.find((r) => r.uuid === UUID.big && r.kind === 'added');
      expect(big?.new?.length).toBeLessThan(40_000);
      expect(big?.new).toContain(' … (cut)');
    });
  });
});
