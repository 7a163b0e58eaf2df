import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { mirrorIdOf } from '../../src/db/store-identity.js';
import type { Store } from '../../src/db/store.js';
import { isMirrorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { folderOwnerOf, OWNER_FILE } from '../../src/media/folder-owner.js';
import { MediaStore } from '../../src/media/media-store.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig, type TestEnv } from '../helpers/config.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { mediaHost, objectPath } from './harness.js';

/** Every file under `dir`, relative, sorted: what must be there byte for byte after a refusal. */
function filesUnder(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (at: string, prefix: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path, `${prefix}${entry.name}/`);
      else found[`${prefix}${entry.name}`] = readFileSync(path).toString('base64');
    }
  };
  if (existsSync(dir)) walk(dir, '');
  return found;
}

/** What a run threw, or what it answered when it did not throw. */
async function outcome(run: Promise<unknown>): Promise<unknown> {
  try {
    return await run;
  } catch (error) {
    return isMirrorError(error) ? { code: error.code, message: error.message } : error;
  }
}

describe.each(STORE_KINDS)('a media folder on %s belongs to one database', (kind) => {
  const fresh = storeMaker(kind);

  it('a folder another database claimed is refused: the run fails with MEDIA_DIR_FOREIGN naming both and the fix, and nothing in the folder changes', async () => {
    const host = await mediaHost();
    const dir = join(tempDir(), 'media');
    const env: TestEnv = { MEDIA_ORIGINS: host.url, MEDIA_DIR: dir, MEDIA_TIMEOUT: '5s' };
    const first = await fresh();
    const second = await fresh();
    const firstUpstream = await simulatedUpstream({ seed: 7, count: 8, mediaBaseUrl: host.mediaBaseUrl });
    const secondUpstream = await simulatedUpstream({ seed: 8, count: 8, mediaBaseUrl: host.mediaBaseUrl });
    await runSync(syncConfig(firstUpstream.url, env), { store: first, logger: silentLogger() });
    const before = filesUnder(dir);

    const refused = await outcome(
      runSync(syncConfig(secondUpstream.url, env), { store: second, logger: silentLogger() }),
    );
    expect(filesUnder(dir)).toEqual(before);
    expect(Object.keys(before)).toContain(OWNER_FILE);
    const [firstId, secondId] = [await mirrorIdOf(first), await mirrorIdOf(second)];
    expect(refused).toEqual({
      code: 'MEDIA_DIR_FOREIGN',
      message:
        `MEDIA_DIR: the media folder ${dir} belongs to another database (${first.file}, mirror id ${firstId}), ` +
        `not to ${second.file} (mirror id ${secondId}); nothing in it was used or deleted. Give this database a ` +
        `folder of its own: set MEDIA_DIR to a new or empty folder. If that database no longer exists, delete ${dir} and start again`,
    });
    expect((await second.listRuns({ limit: 1 }))[0]).toMatchObject({
      status: 'failed',
      errorCode: 'MEDIA_DIR_FOREIGN',
    });
    // The owner's next run goes on as before.
    const again = await runSync(syncConfig(firstUpstream.url, env), { store: first, logger: silentLogger() });
    expect(again.media).toMatchObject({ failed: 0 });
  });

  it('deletes nothing from a folder whose owner file does not name it: none, another database, unreadable', async () => {
    const store = await fresh();
    const owner = await folderOwnerOf(store);
    const other = { ...owner, mirrorId: 'another-database' };
    const orphan = 'ab'.repeat(32);
    const cases: [string, (dir: string) => void][] = [
      ['no owner file', () => undefined],
      ['another database', (dir) => writeOwner(dir, other)],
      ['an unreadable owner file', (dir) => writeFileSync(join(dir, OWNER_FILE), '{"mirror_id":')],
    ];
    for (const [name, prepare] of cases) {
      const dir = tempDir();
      mkdirSync(join(dir, 'objects', 'ab'), { recursive: true });
      writeFileSync(objectPath(dir, orphan), 'a file of someone');
      prepare(dir);
      const files = new MediaStore(dir);
      const attempts = [
        () => files.collectGarbage(() => false, owner),
        () => files.remove([orphan], owner),
      ].map((attempt) => {
        try {
          attempt();
          return 'deleted';
        } catch (error) {
          return isMirrorError(error) ? error.code : String(error);
        }
      });
      expect({ name, attempts, kept: existsSync(objectPath(dir, orphan)) }).toEqual({
        name,
        attempts: ['MEDIA_DIR_FOREIGN', 'MEDIA_DIR_FOREIGN'],
        kept: true,
      });
    }
  });
});

function writeOwner(dir: string, owner: Awaited<ReturnType<typeof folderOwnerOf>>): void {
  writeFileSync(
    join(dir, OWNER_FILE),
    JSON.stringify({
      mirror_id: owner.mirrorId,
      database: owner.database,
      file: owner.file,
      claimed_at: 'then',
    }),
  );
}

describe('a SQLite database moved or copied', () => {
  async function syncedAt(
    path: string,
    dir: string,
  ): Promise<{ host: Awaited<ReturnType<typeof mediaHost>>; url: string }> {
    const host = await mediaHost();
    const upstream = await simulatedUpstream({ seed: 7, count: 8, mediaBaseUrl: host.mediaBaseUrl });
    const store = openDatabase(path);
    try {
      await runSync(syncConfig(upstream.url, { MEDIA_ORIGINS: host.url, MEDIA_DIR: dir }), {
        store,
        logger: silentLogger(),
      });
    } finally {
      store.close();
    }
    return { host, url: upstream.url };
  }

  function opened(path: string): Store & { file: string } {
    const store = openDatabase(path);
    onTestFinished(() => store.close());
    return store;
  }

  it('moved: its folder is still its own, and the owner file names where it is now', async () => {
    const folder = tempDir();
    const dir = join(folder, 'media');
    const { host, url } = await syncedAt(join(folder, 'a.db'), dir);
    renameSync(join(folder, 'a.db'), join(folder, 'moved.db'));
    const moved = opened(join(folder, 'moved.db'));
    const summary = await runSync(syncConfig(url, { MEDIA_ORIGINS: host.url, MEDIA_DIR: dir }), {
      store: moved,
      logger: silentLogger(),
    });
    expect(summary.media).toMatchObject({ failed: 0 });
    expect(JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8'))).toMatchObject({
      mirror_id: await mirrorIdOf(moved),
      database: moved.file,
      file: { path: resolve(folder, 'moved.db') },
    });
  });

  it('copied: the copy carries the same mirror id, and is refused the folder of the original, which keeps every file', async () => {
    const folder = tempDir();
    const dir = join(folder, 'media');
    const { host, url } = await syncedAt(join(folder, 'a.db'), dir);
    copyFileSync(join(folder, 'a.db'), join(folder, 'copy.db'));
    const before = filesUnder(dir);
    const copy = opened(join(folder, 'copy.db'));
    const id = await mirrorIdOf(copy);
    expect(
      await outcome(
        runSync(syncConfig(url, { MEDIA_ORIGINS: host.url, MEDIA_DIR: dir }), {
          store: copy,
          logger: silentLogger(),
        }),
      ),
    ).toEqual({
      code: 'MEDIA_DIR_FOREIGN',
      message:
        `MEDIA_DIR: the media folder ${dir} belongs to the database at ${resolve(folder, 'a.db')}, of which ` +
        `${copy.file} is a copy (both carry mirror id ${id}); nothing in it was used or deleted. Give this ` +
        `database a folder of its own: set MEDIA_DIR to a new or empty folder. If that database no longer exists, delete ${dir} and start again`,
    });
    expect(filesUnder(dir)).toEqual(before);
  });
});
