import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { Rng } from '../../src/simulated-upstream/index.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { STORE_KINDS, usePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-db.js';
import { expectedMissingOrPartial, listedMediaUrls, mediaHost, tempLeftovers } from '../media/harness.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { postgresCrashDatabase, sqliteCrashDatabase, type CrashStore } from './crash-store.js';
import { spawnChildMediaSync, type ChildLine } from './sync-child.js';

type Plan =
  | { at: 'media-temp' | 'media-file' | 'blob'; n: number; delayMs: number }
  | { at: 'txn' | 'txn-end'; n: 2; delayMs: number };

/** Committed media rows that name a file missing, partial or of other bytes; and media rows of unfinished runs. */
async function mediaProblems(db: CrashStore, dir: string): Promise<Record<string, unknown>> {
  const [leftovers] = await db.all<Record<string, number>>(
    `select
       (select count(*) from media_blobs where created_run not in (select id from runs where status = 'succeeded')) as blobs,
       (select count(*) from media_versions where valid_from_run not in (select id from runs where status = 'succeeded')) as versions,
       (select count(*) from media_versions mv where not exists (select 1 from media_blobs b where b.sha256 = mv.sha256)) as dangling`,
  );
  return { missingOrPartial: await expectedMissingOrPartial(db.store, dir), ...leftovers };
}

/**
 * Object files no committed row vouches for (allowed after a kill, collected by the next run); on
 * PostgreSQL also the files whose bytes the database holds with no kept row naming them.
 */
async function orphanObjects(db: CrashStore, dir: string): Promise<string[]> {
  const objects = join(dir, 'objects');
  const rows = await db.all<{ sha256: string }>('select sha256 from media_blobs');
  const live = new Set(rows.map((r) => r.sha256));
  const files = existsSync(objects)
    ? readdirSync(objects).flatMap((prefix) =>
        readdirSync(join(objects, prefix)).filter((name) => !live.has(name)),
      )
    : [];
  if (db.kind !== 'postgres') return files;
  const held = await db.all<{ sha256: string }>(
    `select distinct sha256 from media_blob_chunks
      where sha256 not in (select sha256 from media_blobs where dropped_at is null)`,
  );
  return [...files, ...held.map((r) => `chunks of ${r.sha256}`)];
}

// Each kill aims at one kind of instant, in turn; the instant within the kind is random. On
// PostgreSQL one more: inside the copy of a downloaded file into the database, before the commit.
const KINDS = {
  sqlite: ['media-temp', 'txn', 'media-file', 'txn-end', 'media-temp', 'media-file'],
  postgres: ['media-temp', 'txn', 'media-file', 'txn-end', 'blob', 'media-file', 'blob'],
} as const;

function drawPlan(kinds: readonly Plan['at'][], rng: Rng, kill: number, files: number): Plan {
  const at = kinds[(kill - 1) % kinds.length] ?? 'txn';
  if (at === 'txn' || at === 'txn-end') return { at, n: 2, delayMs: at === 'txn' ? rng.int(5) : 0 };
  return { at, n: 1 + rng.int(files), delayMs: at === 'media-file' ? 0 : rng.int(3) };
}

describe.each(STORE_KINDS)(
  'crash safety of the media mirror on %s: a sync SIGKILLed at random instants',
  (kind) => {
    const pg = kind === 'postgres' ? usePostgres() : null;

    it('never leaves a committed reference to a missing or partial file; the next run collects the leftovers', async () => {
      const host = await mediaHost();
      host.setLatency(3);
      const upstream = await simulatedUpstream({ seed: 11, count: 60, mediaBaseUrl: host.mediaBaseUrl });
      const dir = tempDir();
      const database =
        pg === null ? sqliteCrashDatabase(join(dir, 'mirror.db')) : await postgresCrashDatabase(pg.server);
      const mediaDir = join(dir, 'media');
      const media = {
        MEDIA_ORIGINS: host.url,
        MEDIA_DIR: mediaDir,
        MEDIA_MAX_BYTES: String(10 * 1024 * 1024),
        MEDIA_RUN_MAX_BYTES: String(1024 ** 3),
        MEDIA_TIMEOUT: '10s',
      };
      const rng = new Rng(20_261_123);
      const landed: string[] = [];
      const kinds = KINDS[kind];
      for (let kill = 1; kill <= kinds.length; kill++) {
        // New bytes behind a third of the URLs, so every run downloads and writes files.
        const urls = listedMediaUrls(upstream, host);
        for (const url of urls) if (rng.chance(0.35)) host.bump(url);
        upstream.data.edit(3);
        const plan = drawPlan(kinds, rng, kill, Math.max(1, Math.floor(urls.length / 3)));
        const child = spawnChildMediaSync(upstream.url, database.arg, host.url, mediaDir);
        await child.waitFor(
          (line: ChildLine) =>
            (line.marker === plan.at &&
              (plan.at.startsWith('txn') ? line.n === plan.n : (line.n ?? 0) >= plan.n)) ||
            line.marker === 'done' ||
            line.marker === 'error',
        );
        if (plan.delayMs > 0) await sleep(plan.delayMs);
        const last = child.lines.filter((l) => l.marker !== undefined).at(-1);
        child.kill();
        expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
        landed.push(`#${kill} ${plan.at} ${plan.n} → last marker ${last?.marker ?? '-'} ${last?.n ?? ''}`);

        await database.afterKill(child.pid);
        const store = await database.open();
        try {
          expect(await mediaProblems(store, mediaDir), `kill ${kill}`).toEqual({
            missingOrPartial: [],
            blobs: 0,
            versions: 0,
            dangling: 0,
          });
          // Recovery: the next run collects what the killed one left and mirrors everything.
          const summary = await runSync(syncConfig(upstream.url, media), {
            store: store.store,
            logger: silentLogger(),
          });
          expect(summary.media?.failed).toBe(0);
          expect(await mediaProblems(store, mediaDir)).toEqual({
            missingOrPartial: [],
            blobs: 0,
            versions: 0,
            dangling: 0,
          });
          expect(await orphanObjects(store, mediaDir)).toEqual([]);
          expect(tempLeftovers(mediaDir)).toEqual([]);
          const [open] = await store.all<{ n: number }>(
            'select count(distinct url) as n from media_versions where valid_to_run is null',
          );
          expect(open?.n).toBe(listedMediaUrls(upstream, host).length);
        } finally {
          await store.close();
        }
      }
      console.log(landed.join('\n'));
    });
  },
);
