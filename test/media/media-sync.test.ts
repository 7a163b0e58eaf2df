import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changeView } from '../../src/views/history-views.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import {
  tempLeftovers,
  expectedMissingOrPartial,
  listedMediaUrls,
  mediaHost,
  mediaRig,
  objectPath,
  rowsOf,
  sha256,
} from './harness.js';

describe.each(STORE_KINDS)('media mirror on %s: fetch and store', (kind) => {
  const fresh = storeMaker(kind);

  it('stores every listed media file once, by sha256, byte for byte, with its Content-Type', async () => {
    const rig = await mediaRig({}, await fresh());
    const urls = listedMediaUrls(rig.upstream, rig.host);
    expect(urls.length).toBeGreaterThan(5);
    const summary = await rig.sync();
    expect(summary.media).toEqual({
      fetched: urls.length,
      revalidated: 0,
      failed: 0,
      bytes: urls.reduce((n, url) => n + (rig.host.fileAt(url)?.bytes.length ?? 0), 0),
    });
    const expected = new Map(
      urls.map((url) => {
        const file = rig.host.fileAt(url);
        if (!file) throw new Error(url);
        return [sha256(file.bytes), { size: file.bytes.length, content_type: file.contentType }];
      }),
    );
    expect(
      await rowsOf(rig.store, 'media_blobs', 'sha256, size, content_type, created_run, dropped_at'),
    ).toEqual(
      [...expected]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([sha, v]) => ({ sha256: sha, ...v, created_run: summary.runId, dropped_at: null })),
    );
    expect(await rowsOf(rig.store, 'media_versions', 'url, sha256, valid_from_run, valid_to_run')).toEqual(
      expect.arrayContaining(
        urls.map((url) => ({
          url,
          sha256: sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0)),
          valid_from_run: summary.runId,
          valid_to_run: null,
        })),
      ),
    );
    for (const url of urls) {
      const file = rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0);
      expect(readFileSync(objectPath(rig.media.dir, sha256(file)))).toEqual(file);
    }
    expect(await expectedMissingOrPartial(rig.store, rig.media.dir)).toEqual([]);
    expect(tempLeftovers(rig.media.dir)).toEqual([]);
  });

  it('an unchanged run sends conditional requests and transfers and writes no media bytes', async () => {
    const rig = await mediaRig({}, await fresh());
    await rig.sync();
    const before = rig.host.bytesSent;
    const blobs = await rowsOf(rig.store, 'media_blobs');
    const versions = await rowsOf(rig.store, 'media_versions');
    const sent = rig.host.requests.length;
    const summary = await rig.sync();
    const urls = listedMediaUrls(rig.upstream, rig.host);
    expect(summary.media).toEqual({ fetched: 0, revalidated: urls.length, failed: 0, bytes: 0 });
    expect(rig.host.bytesSent).toBe(before);
    const second = rig.host.requests.slice(sent);
    expect(second.every((r) => typeof r.headers['if-none-match'] === 'string')).toBe(true);
    expect(second.every((r) => typeof r.headers['if-modified-since'] === 'string')).toBe(true);
    expect(await rowsOf(rig.store, 'media_blobs')).toEqual(blobs);
    expect(await rowsOf(rig.store, 'media_versions')).toEqual(versions);
  });

  it('new bytes at the same URL are a media_changed change; both files are kept', async () => {
    const rig = await mediaRig({}, await fresh());
    await rig.sync();
    const url = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png'));
    if (!url) throw new Error('no png in the listing');
    const oldSha = sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0));
    rig.host.bump(url);
    const newSha = sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0));
    const summary = await rig.sync();
    expect(summary.media?.fetched).toBe(1);
    const holders = rig.upstream.data
      .entries()
      .filter((e) => (e as { emoji_file?: unknown }).emoji_file === url || JSON.stringify(e).includes(url));
    const changes = (await rig.store.listChanges({ limit: 100, kind: 'media_changed' })).map(changeView);
    expect(changes).toHaveLength(holders.length);
    expect(changes[0]).toMatchObject({
      run: summary.runId,
      kind: 'media_changed',
      old: { url, sha256: oldSha },
      new: { url, sha256: newSha },
    });
    expect(existsSync(objectPath(rig.media.dir, oldSha))).toBe(true);
    expect(existsSync(objectPath(rig.media.dir, newSha))).toBe(true);
    expect(
      (await rowsOf(rig.store, 'media_versions', 'url, sha256, valid_from_run, valid_to_run')).filter(
        (r) => r.url === url,
      ),
    ).toEqual([
      { url, sha256: oldSha, valid_from_run: 1, valid_to_run: summary.runId },
      { url, sha256: newSha, valid_from_run: summary.runId, valid_to_run: null },
    ]);
  });

  it('a failing URL does not fail the run: recorded with its reason, last good bytes kept, retried next run', async () => {
    const rig = await mediaRig({}, await fresh());
    const first = await rig.sync();
    const url = listedMediaUrls(rig.upstream, rig.host)[0] ?? '';
    const served = sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0));
    rig.host.fail(url, 503);
    rig.upstream.data.edit(1);
    const second = await rig.sync();
    expect(second.media?.failed).toBe(1);
    expect(
      (await rowsOf(rig.store, 'media_urls', 'url, checked_run, failure_code, failure_message')).find(
        (r) => r.url === url,
      ),
    ).toEqual({
      url,
      checked_run: second.runId,
      failure_code: 'MEDIA_HTTP_STATUS',
      failure_message: 'answered 503',
    });
    expect(
      (await rowsOf(rig.store, 'media_versions', 'url, sha256, valid_from_run, valid_to_run')).filter(
        (r) => r.url === url,
      ),
    ).toEqual([{ url, sha256: served, valid_from_run: first.runId, valid_to_run: null }]);
    rig.host.fail(url, null);
    const third = await rig.sync();
    expect(third.media?.failed).toBe(0);
    expect((await rowsOf(rig.store, 'media_urls', 'url, failure_code')).find((r) => r.url === url)).toEqual({
      url,
      failure_code: null,
    });
  });

  it.each([
    [
      '404',
      (rig: Awaited<ReturnType<typeof mediaRig>>, url: string) => rig.host.fail(url, 404),
      {},
      'MEDIA_HTTP_STATUS',
    ],
    ['oversize', () => undefined, { MEDIA_MAX_BYTES: '10' }, 'MEDIA_TOO_LARGE'],
    [
      'type mismatch',
      (rig: Awaited<ReturnType<typeof mediaRig>>, url: string) =>
        rig.host.override(url, { bytes: Buffer.from('<html>not an image</html>'), contentType: 'image/png' }),
      {},
      'MEDIA_TYPE_MISMATCH',
    ],
    [
      'declared type differs from the bytes',
      (rig: Awaited<ReturnType<typeof mediaRig>>, url: string) =>
        rig.host.override(url, {
          bytes: rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0),
          contentType: 'video/mp4',
        }),
      {},
      'MEDIA_TYPE_MISMATCH',
    ],
    [
      'timeout',
      (rig: Awaited<ReturnType<typeof mediaRig>>) => rig.host.setLatency(10_000),
      { MEDIA_TIMEOUT: '100' },
      'MEDIA_TIMEOUT',
    ],
    ['run budget', () => undefined, { MEDIA_RUN_MAX_BYTES: '1' }, 'MEDIA_RUN_BUDGET'],
  ] as const)(
    '%s is recorded per URL as missing, the listing commits',
    async (_name, arrange, overrides, code) => {
      const rig = await mediaRig({}, await fresh());
      const url = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png')) ?? '';
      arrange(rig, url);
      const summary = await rig.sync(overrides);
      expect(summary.entries).toBe(rig.upstream.data.count);
      const failures = (await rowsOf(rig.store, 'media_urls', 'url, failure_code')).filter(
        (r) => r.url === url,
      );
      expect(failures).toEqual([{ url, failure_code: code }]);
      expect((await rowsOf(rig.store, 'media_versions')).filter((r) => r.url === url)).toEqual([]);
      expect(await expectedMissingOrPartial(rig.store, rig.media.dir)).toEqual([]);
      expect(tempLeftovers(rig.media.dir)).toEqual([]);
    },
  );

  it('fetches only from MEDIA_ORIGINS: other hosts and redirects off the list are never requested', async () => {
    const host = await mediaHost();
    const other = await mediaHost();
    const rig = await mediaRig({
      entries: [
        {
          uuid: 'a'.repeat(32),
          name: 'Ada',
          post: 'Engineer',
          emoji_file: `${host.mediaBaseUrl}team/emoji/ada.png`,
          emoji_file_webm: null,
          show_image: true,
          images: [`${other.mediaBaseUrl}team/images/ada_1.jpg`, `${host.mediaBaseUrl}team/images/moved.jpg`],
        },
      ],
    });
    host.redirect(`${host.mediaBaseUrl}team/images/moved.jpg`, `${other.mediaBaseUrl}team/images/moved.jpg`);
    const summary = await rig.sync({ MEDIA_ORIGINS: host.url });
    expect(summary.media).toMatchObject({ fetched: 1, failed: 1 });
    expect(other.requests).toEqual([]);
    expect(await rowsOf(rig.store, 'media_urls', 'url, failure_code')).toEqual([
      { url: `${host.mediaBaseUrl}team/emoji/ada.png`, failure_code: null },
      { url: `${host.mediaBaseUrl}team/images/moved.jpg`, failure_code: 'MEDIA_REDIRECT_REFUSED' },
    ]);
    // Only what a download needs goes to a media host: nothing the upstream client sends.
    for (const request of host.requests) {
      expect(Object.keys(request.headers).sort()).toEqual(['accept', 'connection', 'host', 'user-agent']);
    }
  });

  it('collects the temp files and unreferenced objects a killed run left', async () => {
    const rig = await mediaRig({}, await fresh());
    await rig.sync();
    const orphan = 'f'.repeat(64);
    mkdirSync(join(rig.media.dir, 'objects', 'ff'), { recursive: true });
    writeFileSync(objectPath(rig.media.dir, orphan), 'half a file');
    writeFileSync(join(rig.media.dir, 'tmp', 'x.part'), 'partial');
    await rig.sync();
    expect(existsSync(objectPath(rig.media.dir, orphan))).toBe(false);
    expect(tempLeftovers(rig.media.dir)).toEqual([]);
    expect(await expectedMissingOrPartial(rig.store, rig.media.dir)).toEqual([]);
  });

  it('MEDIA_RETENTION drops files no version valid in the window references, never a current one', async () => {
    const rig = await mediaRig({}, await fresh());
    await rig.sync();
    const url = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png')) ?? '';
    const oldSha = sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0));
    rig.host.bump(url);
    await rig.sync({ MEDIA_RETENTION: '1h' });
    expect(existsSync(objectPath(rig.media.dir, oldSha))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await rig.sync({ MEDIA_RETENTION: '1' });
    expect(existsSync(objectPath(rig.media.dir, oldSha))).toBe(false);
    const dropped = (await rowsOf(rig.store, 'media_blobs', 'sha256, dropped_at')).filter(
      (r) => r.dropped_at !== null,
    );
    expect(dropped.map((r) => r.sha256)).toEqual([oldSha]);
    expect(await expectedMissingOrPartial(rig.store, rig.media.dir)).toEqual([]);
  });
});
