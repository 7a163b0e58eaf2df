import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OWNER_FILE, writeOwnerFile } from '../../src/media/folder-owner.js';
import { silentLogger } from '../../src/logger.js';
import { mediaRefs } from '../../src/media/media-refs.js';
import { pruneHistory } from '../../src/sync/prune-history.js';
import type { SyncSummary } from '../../src/sync/run-sync.js';
import type { TestEnv } from '../helpers/config.js';
import { generateCoworkers } from '../../src/simulated-upstream/generate.js';

type Coworker = ReturnType<typeof generateCoworkers>[number];
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import {
  expectedMissingOrPartial,
  listedMediaUrls,
  mediaRig,
  objectPath,
  rowsOf,
  sha256,
  type MediaRig,
} from './harness.js';

// A forgotten coworker's pictures: the media rows of the URLs only their entries named go, and the
// files no other row needs are dropped (row marked, bytes deleted: the file in the folder on
// SQLite, the database's bytes on PostgreSQL), as MEDIA_RETENTION drops them. Everyone else's
// media, a file shared with someone kept included, stays as it was.

describe.each(STORE_KINDS)('prune and media, on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('drops the media only a forgotten coworker named, and nothing anyone else needs', async () => {
    let entries: Coworker[] = [];
    const rig = await mediaRig(
      (host) => {
        entries = generateCoworkers(7, 12, { dupRate: 0, mediaBaseUrl: host.mediaBaseUrl });
        const shared = entries.slice(0, 5).flatMap((e) => mediaRefs(e).map((ref) => ref.url))[0] ?? '';
        // Her own picture; her emoji at a URL of her own holds the same bytes as others' (one file).
        entries[5] = {
          ...(entries[5] as Coworker),
          emoji_file: `${host.mediaBaseUrl}emoji/her-own.gif`,
          images: [`${host.mediaBaseUrl}img/her-own.png`, shared],
        };
        entries[6] = { ...(entries[6] as Coworker), emoji_file: `${host.mediaBaseUrl}emoji/his-own.gif` };
        return { entries };
      },
      await fresh(),
    );
    await rig.sync();
    const hers = mediaRefs(entries[5]).map((ref) => ref.url);
    rig.upstream.data.setEntries(entries.filter((_, i) => i !== 5));
    await rig.sync();
    const kept = new Set(listedMediaUrls(rig.upstream, rig.host));
    const onlyHers = hers.filter((url) => !kept.has(url));
    expect(onlyHers.map((url) => url.slice(url.lastIndexOf('/') + 1))).toStrictEqual([
      'her-own.gif',
      'her-own.png',
    ]);

    const before = {
      versions: await rowsOf(rig.store, 'media_versions', 'url, sha256, valid_from_run, valid_to_run'),
      urls: await rowsOf(rig.store, 'media_urls', 'url, etag, last_modified, checked_run, failure_code'),
      blobs: await rowsOf(rig.store, 'media_blobs', 'sha256, size, content_type, created_run, dropped_at'),
    };
    const goneShas = new Set(
      before.versions.filter((v) => onlyHers.includes(String(v.url))).map((v) => String(v.sha256)),
    );
    for (const v of before.versions) if (!onlyHers.includes(String(v.url))) goneShas.delete(String(v.sha256));
    // The PNG's bytes are hers alone; the GIF's are everyone's.
    expect(goneShas.size).toBe(1);

    const summary = await pruneHistory(
      rig.store,
      { removedAfterMs: 0, olderThanMs: null },
      { media: rig.media, logger: silentLogger() },
    );

    expect(summary.droppedFiles).toStrictEqual([...goneShas].sort());
    expect(summary.counts.files).toBe(goneShas.size);
    expect(
      await rowsOf(rig.store, 'media_versions', 'url, sha256, valid_from_run, valid_to_run'),
    ).toStrictEqual(before.versions.filter((v) => !onlyHers.includes(String(v.url))));
    expect(
      await rowsOf(rig.store, 'media_urls', 'url, etag, last_modified, checked_run, failure_code'),
    ).toStrictEqual(before.urls.filter((u) => !onlyHers.includes(String(u.url))));
    const blobs = await rowsOf(
      rig.store,
      'media_blobs',
      'sha256, size, content_type, created_run, dropped_at',
    );
    expect(
      blobs.map((b) => ({ ...b, dropped_at: goneShas.has(String(b.sha256)) ? 'set' : b.dropped_at })),
    ).toStrictEqual(
      before.blobs.map((b) => ({ ...b, dropped_at: goneShas.has(String(b.sha256)) ? 'set' : b.dropped_at })),
    );
    expect(blobs.filter((b) => goneShas.has(String(b.sha256))).every((b) => b.dropped_at !== null)).toBe(
      true,
    );
    // Her files are gone from where the store keeps them; every kept file is whole.
    for (const sha of goneShas) {
      if (rig.store.holdsBlobs) expect(await rig.store.openBlob(sha, { start: 0, end: 0 })).toBeNull();
      else expect(existsSync(objectPath(rig.media.dir ?? '', sha))).toBe(false);
    }
    expect(await expectedMissingOrPartial(rig.store, rig.media.dir ?? '')).toStrictEqual([]);
    // The next run finds nothing to fetch again and nothing missing.
    const next = await rig.sync();
    expect(next.media?.failed).toBe(0);
  });
});

/**
 * Two runs on SQLite in which a coworker with a picture of her own leaves: the rig, and the sha256
 * of the file only she needed (in the media folder, which the runs claimed for the database).
 */
async function herPictureRig(
  secondRun: TestEnv = {},
): Promise<{ rig: MediaRig; hers: string; second: SyncSummary }> {
  let entries: Coworker[] = [];
  const rig = await mediaRig((host) => {
    entries = generateCoworkers(7, 6, { dupRate: 0, mediaBaseUrl: host.mediaBaseUrl });
    entries[5] = { ...(entries[5] as Coworker), images: [`${host.mediaBaseUrl}img/her-own.png`] };
    return { entries };
  });
  await rig.sync();
  const hers = (await rowsOf(rig.store, 'media_versions', 'url, sha256')).find((v) =>
    String(v.url).endsWith('/her-own.png'),
  );
  expect(existsSync(objectPath(rig.media.dir, String(hers?.sha256)))).toBe(true);
  rig.upstream.data.setEntries(entries.slice(0, 5));
  const second = await rig.sync(secondRun);
  return { rig, hers: String(hers?.sha256), second };
}

const TABLES = ['media_versions', 'media_urls', 'media_blobs', 'versions', 'coworkers'] as const;

async function mediaTables(rig: MediaRig): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const table of TABLES) out[table] = await rowsOf(rig.store, table, '*');
  return out;
}

describe('prune and the media folder owner (SQLite)', () => {
  it('PRUNE_REMOVED_AFTER: the sync that sees her leave deletes her picture from its own folder', async () => {
    const { rig, hers, second } = await herPictureRig({ PRUNE_REMOVED_AFTER: '0s' });
    expect(second.pruned?.droppedFiles).toStrictEqual([hers]);
    expect(second.pruned?.files).toStrictEqual({ deleted: 1, kept: 0, problem: null });
    expect(existsSync(objectPath(rig.media.dir, hers))).toBe(false);
    expect(await expectedMissingOrPartial(rig.store, rig.media.dir)).toStrictEqual([]);
  });

  it('keeps the files in a folder another database may use, and says so', async () => {
    const { rig, hers } = await herPictureRig();
    // The folder as it was before each database had its own: no owner file, and a file of another's.
    rmSync(join(rig.media.dir, OWNER_FILE));
    const stranger = sha256(Buffer.from('another database keeps this file'));
    mkdirSync(dirname(objectPath(rig.media.dir, stranger)), { recursive: true });
    writeFileSync(objectPath(rig.media.dir, stranger), 'another database keeps this file');

    const summary = await pruneHistory(
      rig.store,
      { removedAfterMs: 0, olderThanMs: null },
      { media: rig.media, logger: silentLogger() },
    );

    expect(summary.droppedFiles).toStrictEqual([hers]);
    expect(summary.files).toStrictEqual({
      deleted: 0,
      kept: 1,
      problem:
        `the media folder ${rig.media.dir} has no owner file and holds files this database does not ` +
        'reference, so another database may use it: the files only the pruned rows needed were left ' +
        'in it. Give each database a folder of its own (MEDIA_DIR, docs/media.md), then prune again',
    });
    expect(existsSync(objectPath(rig.media.dir, hers))).toBe(true);
    expect(existsSync(objectPath(rig.media.dir, stranger))).toBe(true);
    expect(existsSync(join(rig.media.dir, OWNER_FILE))).toBe(false);
  });

  it('refuses in a folder whose owner file names another database, and deletes nothing', async () => {
    const { rig, hers } = await herPictureRig();
    writeOwnerFile(
      rig.media.dir,
      { mirrorId: 'another-mirror', database: '/elsewhere/other.db', file: null },
      { replace: true },
    );
    const before = await mediaTables(rig);

    await expect(
      pruneHistory(
        rig.store,
        { removedAfterMs: 0, olderThanMs: null },
        { media: rig.media, logger: silentLogger() },
      ),
    ).rejects.toMatchObject({ code: 'MEDIA_DIR_FOREIGN' });

    expect(await mediaTables(rig)).toStrictEqual(before);
    expect(existsSync(objectPath(rig.media.dir, hers))).toBe(true);
  });
});
