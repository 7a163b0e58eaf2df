import { existsSync, renameSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { eventually } from '../helpers/process.js';
import { describePostgres, storeMaker } from '../helpers/postgres.js';
import { listedMediaUrls, mediaRig, objectPath, sha256 } from '../media/harness.js';

// Regression: with the media folder moved away under a running `serve`, a file requested before got
// no HTTP answer at all (the route remembered it as present and the stream failed on open),
// /readyz stayed ready and the pages kept pointing at dead /media/ URLs.
// SQLite: on PostgreSQL the folder is a cache of the bytes the database holds (below).
describe('the media folder moved away under a running server', () => {
  it('files answer 503, /readyz says why, pages fall back to the upstream URLs; all recover when it is back', async () => {
    const rig = await mediaRig();
    await rig.sync();
    const url = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png'));
    if (!url) throw new Error('no png in the listing');
    const sha = sha256(rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0));
    const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: false } });
    await mirror.snapshots.integrity.check();
    const fileUrl = `${mirror.url}/media/${sha}/${url.split('/').at(-1)}`;
    const page = async () => (await fetch(`${mirror.url}/team/`)).text();
    expect((await fetch(fileUrl)).status).toBe(200);
    expect((await fetch(`${mirror.url}/readyz`)).status).toBe(200);
    expect(await page()).toContain(`src="/media/${sha}/`);

    const moved = `${rig.media.dir}.moved`;
    renameSync(rig.media.dir, moved);
    let restored = false;
    onTestFinished(() => {
      if (!restored) renameSync(moved, rig.media.dir);
    });
    const gone = await fetch(fileUrl);
    expect(gone.status).toBe(503);
    expect(gone.headers.get('cache-control')).toBe('no-store');
    expect(await gone.text()).toBe('Media file unavailable: the media folder is missing or unreadable.\n');
    const ready = await fetch(`${mirror.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'unready',
      reason: `media folder ${rig.media.dir}/objects is missing (moved or deleted?): mirrored files cannot be served`,
    });
    const html = await page();
    expect(html).not.toContain('src="/media/');
    expect(html).toContain(`src="${url}"`);

    renameSync(moved, rig.media.dir);
    restored = true;
    expect((await fetch(fileUrl)).status).toBe(200);
    expect((await fetch(`${mirror.url}/readyz`)).status).toBe(200);
  });
});

// On PostgreSQL the same move takes nothing away: the database holds the bytes, the folder only
// caches them, so every file still answers and the mirror stays ready (a promise that differs
// from SQLite's on purpose: there the folder is the store).
describePostgres('the media folder moved away under a server on PostgreSQL', () => {
  const fresh = storeMaker('postgres');

  it('files still answer from the database, /readyz stays ready, pages keep the mirror URLs', async () => {
    const rig = await mediaRig({}, await fresh());
    await rig.sync();
    const url = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png'));
    if (!url) throw new Error('no png in the listing');
    const bytes = rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0);
    const sha = sha256(bytes);
    const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: false } });
    const fileUrl = `${mirror.url}/media/${sha}/${url.split('/').at(-1)}`;
    expect((await fetch(fileUrl)).status).toBe(200);

    const moved = `${rig.media.dir}.moved`;
    // Both folders are in the rig's temp folder, removed with it.
    renameSync(rig.media.dir, moved);
    const served = await fetch(fileUrl);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(bytes);
    // Read from the database, the file is cached again (once the answer is sent) where it was.
    await eventually(
      () => (existsSync(objectPath(rig.media.dir, sha)) ? true : undefined),
      undefined,
      'the cache',
    );
    expect((await fetch(`${mirror.url}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${mirror.url}/team/`)).text()).toContain(`src="/media/${sha}/`);
  });
});
