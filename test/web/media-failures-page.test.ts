import { describe, expect, it, onTestFinished } from 'vitest';
import { buildServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import type { MediaFailureCode } from '../../src/media/fetch-media.js';
import { describedMediaFailures } from '../../src/web/media-failure-words.js';
import { FAILED_MEDIA_NAMED } from '../../src/web/pages/run-media.js';
import type { StatusSource } from '../../src/web/status-source.js';
import { defaultServerConfig } from '../helpers/mirror-server.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { listedMediaUrls, mediaRig, type MediaRig } from '../media/harness.js';

const status: StatusSource = {
  upstream: () => ({ mode: 'upstream', url: 'http://127.0.0.1:8766' }),
  nextRunAt: () => null,
  randomDelayMs: 0,
  syncRunning: () => false,
};

async function pages(rig: MediaRig) {
  const server = await buildServer({
    store: rig.store,
    logger: silentLogger(),
    config: { server: defaultServerConfig },
    web: { status },
  });
  onTestFinished(() => server.close());
  const url = await server.listen(0, '127.0.0.1');
  return async (path: string) => {
    const res = await fetch(`${url}${path}`);
    expect(res.status, path).toBe(200);
    return res.text();
  };
}

/** The page's text as a person reads it: tags dropped, entities decoded, spaces collapsed. */
function words(html: string): string {
  const blocks = /<\/?(?:p|div|ul|li|dt|dd|h\d)\b[^>]*>/g;
  return decoded(html.replace(blocks, ' ').replace(/<[^>]+>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/** Text or an attribute value as the browser reads it. */
function decoded(html: string): string {
  return html
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The notice that names the media failures: its whole text, and the links of its list. */
function mediaNotice(html: string): { kind: string; text: string; links: string[] } | null {
  const match = /<div class="notice (warn|bad)"[^>]*>([\s\S]*?)<\/div>/.exec(html);
  if (!match) return null;
  const body = match[2] ?? '';
  const links = [...body.matchAll(/<a href="([^"]*)"/g)].map((m) => decoded(m[1] ?? ''));
  return { kind: match[1] ?? '', text: words(body), links };
}

describe.each(STORE_KINDS)('media failures on the pages, on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('regression: the status page and the run page say how many media files failed, why in words, and link the first few', async () => {
    const rig = await mediaRig({}, await fresh());
    const urls = listedMediaUrls(rig.upstream, rig.host);
    const mislabelled = urls.find((u) => u.endsWith('.jpg'));
    const png = urls.find((u) => u.endsWith('.png'));
    if (!mislabelled || !png) throw new Error(`no jpg and png among ${urls.join(' ')}`);
    for (const url of urls) if (url !== mislabelled) rig.host.fail(url, 404);
    rig.host.override(mislabelled, {
      bytes: rig.host.fileAt(png)?.bytes ?? Buffer.alloc(0),
      contentType: 'image/jpeg',
    });
    const summary = await rig.sync();
    expect(summary.media).toMatchObject({ fetched: 0, revalidated: 0, failed: urls.length });
    // The hosts' error pages count as downloaded bytes.
    const bytes = (summary.media?.bytes ?? 0).toLocaleString('en-US');
    const get = await pages(rig);

    const first = urls.slice(0, FAILED_MEDIA_NAMED);
    const reasonOf = (url: string) =>
      url === mislabelled
        ? 'declared image/jpeg but the bytes are png (MEDIA_TYPE_MISMATCH)'
        : 'answered 404 (MEDIA_HTTP_STATUS)';
    const listed = first.map((url) => `${url}: ${reasonOf(url)}`).join(' ');
    const why =
      `: ${urls.length - 1} answered with an error status (MEDIA_HTTP_STATUS), ` +
      `1 did not match the type of file the host declared (MEDIA_TYPE_MISMATCH). ` +
      `A file an earlier run mirrored is still served from its last good copy; each is tried again next run. ` +
      `The first ${FAILED_MEDIA_NAMED}, by address: ${listed}`;

    const statusPage = await get('/');
    expect(mediaNotice(statusPage)).toEqual({
      kind: 'warn',
      text: `${urls.length} media files of run ${summary.runId} were not mirrored${why}`,
      links: first,
    });
    expect(words(statusPage)).toContain(
      `Media 0 fetched, 0 unchanged (revalidated), ${urls.length} failed; ${bytes} bytes downloaded`,
    );

    const runPage = await get(`/runs/${summary.runId}/`);
    expect(mediaNotice(runPage)).toEqual({
      kind: 'warn',
      text: `${urls.length} media files of this run were not mirrored${why}`,
      links: first,
    });
    expect(words(runPage)).toContain(
      `Media 0 fetched, 0 unchanged (revalidated), ${urls.length} failed; ${bytes} bytes downloaded`,
    );
    expect(words(await get('/runs/'))).toContain(`· ${urls.length} media failed`);
  });

  it('an older run whose failed files later runs tried again says so; the status page follows the latest run', async () => {
    const rig = await mediaRig({}, await fresh());
    const urls = listedMediaUrls(rig.upstream, rig.host);
    rig.host.fail('*', 503);
    const before = await rig.sync();
    // The next run no longer lists one coworker: their files are not tried again.
    const [leaving, ...staying] = rig.upstream.data.entries();
    if (!leaving) throw new Error('no entry');
    rig.upstream.data.setEntries(staying);
    const listedAfter = listedMediaUrls(rig.upstream, rig.host);
    const notTriedAgain = urls.filter((url) => !listedAfter.includes(url));
    expect(notTriedAgain.length).toBeGreaterThan(0);
    rig.host.fail('*', null);
    const stillBroken = listedAfter.slice(0, 2);
    for (const url of stillBroken) rig.host.fail(url, 503);
    const after = await rig.sync();
    expect(after.media).toMatchObject({ fetched: listedAfter.length - 2, failed: 2 });
    const get = await pages(rig);

    const named = (list: string[]) => list.map((url) => `${url}: answered 503 (MEDIA_HTTP_STATUS)`).join(' ');
    const n = notTriedAgain.length;
    expect(mediaNotice(await get(`/runs/${before.runId}/`))?.text).toBe(
      `${urls.length} media files of this run were not mirrored; of the ${n} no later run tried again: ` +
        `${n} answered with an error status (MEDIA_HTTP_STATUS). ` +
        `Later runs tried the other ${urls.length - n} again. ` +
        'A file an earlier run mirrored is still served from its last good copy; each is tried again next run. ' +
        (n > FAILED_MEDIA_NAMED ? `The first ${FAILED_MEDIA_NAMED}, by address: ` : '') +
        named(notTriedAgain.slice(0, FAILED_MEDIA_NAMED)),
    );
    expect(mediaNotice(await get('/'))?.text).toBe(
      `2 media files of run ${after.runId} were not mirrored: 2 answered with an error status (MEDIA_HTTP_STATUS). ` +
        `A file an earlier run mirrored is still served from its last good copy; each is tried again next run. ${named(stillBroken)}`,
    );

    // A third run tries the two again: the second run's page says so, and names none.
    await rig.sync();
    expect(mediaNotice(await get(`/runs/${after.runId}/`))).toEqual({
      kind: 'warn',
      text: '2 media files of this run were not mirrored; later runs tried each of them again.',
      links: [],
    });
  });

  it("a failed URL is the upstream's text: escaped in the link and in its words", async () => {
    const rig = await mediaRig({ count: 2 }, await fresh());
    const hostile = `${rig.host.url}/media/a"><script>alert(1)</script>.png`;
    const [entry, ...rest] = rig.upstream.data.entries();
    if (!entry) throw new Error('no entry');
    rig.upstream.data.setEntries([{ ...entry, emoji_file: hostile }, ...rest]);
    rig.host.fail(hostile, 404);
    const summary = await rig.sync();
    expect(summary.media?.failed).toBe(1);
    const page = await get(rig, `/runs/${summary.runId}/`);
    expect(page).not.toContain('<script>alert(1)');
    const notice = mediaNotice(page);
    // In text and in the attribute alike: the quote and the angle that could open a tag, escaped.
    expect(page).toContain('a&quot;>&lt;script>alert(1)&lt;/script>.png" rel="noreferrer nofollow">');
    expect(page).toContain('<bdi>' + hostile.replace('"', '&quot;').replaceAll('<', '&lt;') + '</bdi>');
    expect(notice?.links).toEqual([hostile]);
    expect(notice?.text).toContain(`${hostile}: answered 404 (MEDIA_HTTP_STATUS)`);
  });
});

async function get(rig: MediaRig, path: string): Promise<string> {
  return (await pages(rig))(path);
}

describe('media failure codes in words', () => {
  it('every code the media fetcher records has its words on the pages', () => {
    const codes: Record<MediaFailureCode, true> = {
      MEDIA_HTTP_STATUS: true,
      MEDIA_NETWORK: true,
      MEDIA_TIMEOUT: true,
      MEDIA_TOO_LARGE: true,
      MEDIA_RUN_BUDGET: true,
      MEDIA_TYPE_MISMATCH: true,
      MEDIA_REDIRECT_REFUSED: true,
      MEDIA_STORE_FAILED: true,
    };
    expect([...describedMediaFailures].sort()).toEqual(Object.keys(codes).sort());
  });
});
