import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import { silentLogger } from '../../src/logger.js';
import type { SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import type { ServerDeps } from '../../src/http/server.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig, type TestEnv } from '../helpers/config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { hostFiles, listedMediaUrls, mediaHost, objectPath, objectsIn, sha256 } from '../media/harness.js';

// Regression: the README's order (the demo's data/demo.db, then a real data/mirror.db) puts two
// databases in one folder, and both took `media/` beside them as their media folder. Each run
// deleted the files its own database did not reference: after the second mirror's sync the demo's
// files were gone, and a mirror serving as the fallback answered 503 for every one of them.

type MediaHost = Awaited<ReturnType<typeof mediaHost>>;

/** A SQLite database at `path`, closed when the test ends. */
function databaseAt(path: string): MirrorDatabase {
  const store = openDatabase(path);
  onTestFinished(() => store.close());
  return store;
}

/** Every file a database recorded, requested from a server of its own: status and whether the bytes match. */
async function servedFiles(
  store: MirrorDatabase,
  media: ServerDeps['config']['media'],
  upstream: SimulatedUpstream,
  host: MediaHost,
  files: Map<string, Buffer>,
): Promise<{ url: string; status: number; same: boolean }[]> {
  const mirror = await startMirror(store, { media });
  const answers = [];
  for (const url of listedMediaUrls(upstream, host)) {
    const bytes = files.get(url) ?? Buffer.alloc(0);
    const res = await fetch(`${mirror.url}/media/${sha256(bytes)}/${url.split('/').at(-1)}`);
    answers.push({ url, status: res.status, same: Buffer.from(await res.arrayBuffer()).equals(bytes) });
  }
  return answers;
}

function allServed(upstream: SimulatedUpstream, host: MediaHost) {
  return listedMediaUrls(upstream, host).map((url) => ({ url, status: 200, same: true }));
}

interface Database {
  store: MirrorDatabase;
  upstream: SimulatedUpstream;
}

/**
 * The README's two databases in one folder, `demo.db` and `mirror.db`, each with an upstream of
 * its own naming files on one media host; `files` holds the bytes behind every URL of both.
 */
async function twoDatabases(
  folder: string,
  host: MediaHost,
): Promise<{ demo: Database; mirror: Database; files: Map<string, Buffer> }> {
  const at = async (name: string, seed: number): Promise<Database> => ({
    store: databaseAt(join(folder, name)),
    upstream: await simulatedUpstream({ seed, count: 12, mediaBaseUrl: host.mediaBaseUrl }),
  });
  const demo = await at('demo.db', 7);
  const mirror = await at('mirror.db', 8);
  const files = new Map([...hostFiles(demo.upstream, host), ...hostFiles(mirror.upstream, host)]);
  return { demo, mirror, files };
}

describe('two databases in one folder (SQLite)', () => {
  it('with default settings each keeps its own media: both serve every file they recorded after the other synced, the media host down', async () => {
    const host = await mediaHost();
    const { demo, mirror, files } = await twoDatabases(tempDir(), host);
    const env = (store: MirrorDatabase): TestEnv => ({
      DATABASE_PATH: store.file,
      MEDIA_ORIGINS: host.url,
      MEDIA_TIMEOUT: '5s',
    });
    const configOf = (db: Database) => syncConfig(db.upstream.url, env(db.store));

    // The demo first, then the real mirror, then each again, as two mirrors on one machine run.
    for (const db of [demo, mirror, demo, mirror]) {
      const summary = await runSync(configOf(db), { store: db.store, logger: silentLogger() });
      expect(summary.media?.failed).toBe(0);
    }
    await host.close();

    for (const db of [demo, mirror]) {
      expect(await servedFiles(db.store, configOf(db).media, db.upstream, host, files)).toEqual(
        allServed(db.upstream, host),
      );
      // Each folder holds its own database's files, and only those.
      expect(objectsIn(configOf(db).media.dir)).toEqual([...(await db.store.liveMediaObjects())].sort());
    }
    expect(configOf(demo).media.dir).not.toBe(configOf(mirror).media.dir);
  });

  it("an install upgraded from the shared media/ folder: each database's files are linked into its own folder, the old folder keeps every file", async () => {
    const host = await mediaHost();
    const folder = tempDir();
    const legacy = join(folder, 'media');
    const { demo, mirror, files } = await twoDatabases(folder, host);
    const run = (db: Database, env: TestEnv) =>
      runSync(
        syncConfig(db.upstream.url, {
          DATABASE_PATH: db.store.file,
          MEDIA_ORIGINS: host.url,
          MEDIA_TIMEOUT: '5s',
          ...env,
        }),
        {
          store: db.store,
          logger: silentLogger(),
        },
      );

    // The layout before: both databases' files in media/ beside them, which names no owner. The
    // second one's run finds files it does not reference there and must delete none of them.
    await run(demo, { MEDIA_DIR: legacy });
    rmSync(join(legacy, 'owner.json'), { force: true });
    await run(mirror, { MEDIA_DIR: legacy });
    const everyFile = [...new Set([...files.values()].map((bytes) => sha256(bytes)))].sort();
    expect(objectsIn(legacy)).toEqual(everyFile);

    // The upgrade: MEDIA_DIR unset, and the media host down, so no file can be fetched again.
    await host.close();
    for (const db of [demo, mirror]) {
      await run(db, {});
      const own = syncConfig(db.upstream.url, { DATABASE_PATH: db.store.file }).media.dir;
      expect(own).toBe(`${db.store.file}.media`);
      expect(await servedFiles(db.store, { dir: own, rewrite: false }, db.upstream, host, files)).toEqual(
        allServed(db.upstream, host),
      );
      // Linked, not copied: one file on disk, two names.
      for (const sha of await db.store.liveMediaObjects()) {
        expect(statSync(objectPath(own, sha)).ino).toBe(statSync(objectPath(legacy, sha)).ino);
      }
    }
    expect(objectsIn(legacy)).toEqual(everyFile);
  });
});
