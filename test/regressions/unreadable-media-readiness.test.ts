import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { localSnapshotPath } from '../../src/http/local-snapshot-keeper.js';
import { startMirror } from '../helpers/mirror-server.js';
import { eventually } from '../helpers/process.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { listedMediaUrls, mediaRig, objectPath, sha256, type MediaRig } from '../media/harness.js';

// Regression: a mirror whose recorded media files were deleted from under it (by another database's
// run sharing its folder) answered 503 for every one of them while /readyz said ready: only a
// missing objects/ folder made it unready, and the status page said nothing.

/**
 * A mirror serving the rig, once it has kept its local snapshot: on PostgreSQL that copies every
 * served file from the database into the folder, which must be over before a test takes one away.
 */
async function servingMirror(rig: MediaRig): Promise<Awaited<ReturnType<typeof startMirror>>> {
  const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: false } });
  await eventually(() => (existsSync(localSnapshotPath(rig.media.dir)) ? true : undefined));
  return mirror;
}

/** A synced rig and one of its files: its bytes, hash and the path the mirror serves it at. */
async function syncedFile(rig: MediaRig): Promise<{ bytes: Buffer; sha: string; path: string }> {
  await rig.sync();
  const url = listedMediaUrls(rig.upstream, rig.host).find((u) => u.endsWith('.png'));
  if (!url) throw new Error('no png in the listing');
  const bytes = rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0);
  const sha = sha256(bytes);
  return { bytes, sha, path: `/media/${sha}/${url.split('/').at(-1)}` };
}

/** Every distinct file of a synced rig's listing, as `syncedFile` gives one. */
function filesOf(rig: MediaRig): { bytes: Buffer; sha: string; path: string }[] {
  const bySha = new Map<string, { bytes: Buffer; sha: string; path: string }>();
  for (const url of listedMediaUrls(rig.upstream, rig.host)) {
    const bytes = rig.host.fileAt(url)?.bytes ?? Buffer.alloc(0);
    const sha = sha256(bytes);
    bySha.set(sha, { bytes, sha, path: `/media/${sha}/${url.split('/').at(-1)}` });
  }
  return [...bySha.values()];
}

/**
 * Makes a recorded file unreadable: its object deleted from the folder, and on PostgreSQL its
 * bytes from the database too (else the database serves it, as it should).
 */
async function lose(rig: MediaRig, sha: string): Promise<void> {
  rmSync(objectPath(rig.media.dir, sha), { force: true });
  if (rig.store.holdsBlobs)
    await storeRows(rig.store, `delete from media_blob_chunks where sha256 = '${sha}'`);
}

async function readiness(base: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: await res.json() };
}

describe.each(STORE_KINDS)('a recorded media file that cannot be read, on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('once the media route fails to open it: /readyz is 503 naming it and the status page says so; once served again, ready', async () => {
    const rig = await mediaRig({}, await fresh());
    const file = await syncedFile(rig);
    const mirror = await servingMirror(rig);
    expect((await readiness(mirror.url)).status).toBe(200);

    await lose(rig, file.sha);
    expect((await fetch(`${mirror.url}${file.path}`)).status).toBe(503);
    const reason =
      `1 recorded media file cannot be read from ${rig.media.dir} (e.g. ${file.sha}): it answers 503 ` +
      'until restored from a backup or fetched again by the next sync';
    expect(await readiness(mirror.url)).toEqual({ status: 503, body: { status: 'unready', reason } });
    const page = await (await fetch(`${mirror.url}/`)).text();
    expect(page).toContain(`<p class="notice bad" role="alert">Mirrored media: <bdi>${reason}</bdi>.`);

    // Restored (on PostgreSQL, the database gets its bytes back from the file, as a run copies them in).
    writeFileSync(objectPath(rig.media.dir, file.sha), file.bytes);
    if (rig.store.holdsBlobs) await rig.store.putBlob(file.sha, objectPath(rig.media.dir, file.sha));
    expect((await fetch(`${mirror.url}${file.path}`)).status).toBe(200);
    expect((await readiness(mirror.url)).status).toBe(200);
    expect(await (await fetch(`${mirror.url}/`)).text()).not.toContain('Mirrored media:');
  });

  it('without any request for it: the look over every kept file at start says it on /readyz; put back, ready again', async () => {
    const rig = await mediaRig({}, await fresh());
    const file = await syncedFile(rig);
    await lose(rig, file.sha);
    const mirror = await startMirror(rig.store, { media: { dir: rig.media.dir, rewrite: false } });
    const unready = await eventually(async () => {
      const answer = await readiness(mirror.url);
      return answer.status === 503 ? answer : undefined;
    });
    expect(unready.body).toEqual({
      status: 'unready',
      reason:
        `1 recorded media file cannot be read from ${rig.media.dir} (e.g. ${file.sha}): it answers 503 ` +
        'until restored from a backup or fetched again by the next sync',
    });

    // Put back without anyone asking for it: a probe looks at one lost file, then at all of them.
    writeFileSync(objectPath(rig.media.dir, file.sha), file.bytes);
    if (rig.store.holdsBlobs) await rig.store.putBlob(file.sha, objectPath(rig.media.dir, file.sha));
    await eventually(async () => ((await readiness(mirror.url)).status === 200 ? true : undefined));
  });

  it('a folder put back: the first file served again has every file looked at again, and the status page clears without the others asked for', async () => {
    const rig = await mediaRig({}, await fresh());
    await rig.sync();
    const [one, two] = filesOf(rig);
    if (!one || !two) throw new Error('fewer than two files in the listing');
    const mirror = await servingMirror(rig);
    for (const file of [one, two]) await lose(rig, file.sha);
    for (const file of [one, two]) expect((await fetch(`${mirror.url}${file.path}`)).status).toBe(503);
    expect(await (await fetch(`${mirror.url}/`)).text()).toContain(
      `<p class="notice bad" role="alert">Mirrored media: <bdi>2 recorded media files cannot be read`,
    );

    for (const file of [one, two]) {
      writeFileSync(objectPath(rig.media.dir, file.sha), file.bytes);
      if (rig.store.holdsBlobs) await rig.store.putBlob(file.sha, objectPath(rig.media.dir, file.sha));
    }
    expect((await fetch(`${mirror.url}${one.path}`)).status).toBe(200);
    // Neither /readyz (which looks again itself) nor the second file is asked: the status page alone.
    await eventually(async () =>
      (await (await fetch(`${mirror.url}/`)).text()).includes('Mirrored media:') ? undefined : true,
    );
  });
});
