import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import { silentLogger } from '../../src/logger.js';
import { Rng } from '../../src/simulated-upstream/index.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { tempDir } from '../helpers/temp-db.js';
import { expectedMissingOrPartial, listedMediaUrls, mediaHost, tempLeftovers } from '../media/harness.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { spawnChildMediaSync, type ChildLine } from './sync-child.js';

type Plan =
  | { at: 'media-temp' | 'media-file'; n: number; delayMs: number }
  | { at: 'txn' | 'txn-end'; n: 2; delayMs: number };

/** Committed media rows that name a file missing, partial or of other bytes; and media rows of unfinished runs. */
async function mediaProblems(store: MirrorDatabase, dir: string): Promise<Record<string, unknown>> {
  const leftovers = store.sqlite
    .prepare(
      `select
         (select count(*) from media_blobs where created_run not in (select id from runs where status = 'succeeded')) as blobs,
         (select count(*) from media_versions where valid_from_run not in (select id from runs where status = 'succeeded')) as versions,
         (select count(*) from media_versions mv where not exists (select 1 from media_blobs b where b.sha256 = mv.sha256)) as dangling`,
    )
    .get() as Record<string, number>;
  return { missingOrPartial: await expectedMissingOrPartial(store, dir), ...leftovers };
}

/** Object files no committed row vouches for (allowed after a kill, collected by the next run). */
function orphanObjects(store: MirrorDatabase, dir: string): string[] {
  const objects = join(dir, 'objects');
  if (!existsSync(objects)) return [];
  const live = new Set(store.sqlite.prepare('select sha256 from media_blobs').pluck().all() as string[]);
  return readdirSync(objects).flatMap((prefix) =>
    readdirSync(join(objects, prefix)).filter((name) => !live.has(name)),
  );
}

// Each kill aims at one kind of instant, in turn; the instant within the kind is random.
const KINDS = ['media-temp', 'txn', 'media-file', 'txn-end', 'media-temp', 'media-file'] as const;

function drawPlan(rng: Rng, kill: number, files: number): Plan {
  const at = KINDS[(kill - 1) % KINDS.length] ?? 'txn';
  if (at === 'txn' || at === 'txn-end') return { at, n: 2, delayMs: at === 'txn' ? rng.int(5) : 0 };
  return { at, n: 1 + rng.int(files), delayMs: at === 'media-temp' ? rng.int(3) : 0 };
}

describe('crash safety of the media mirror: a sync SIGKILLed at random instants', () => {
  it('never leaves a committed reference to a missing or partial file; the next run collects the leftovers', async () => {
    const host = await mediaHost();
    host.setLatency(3);
    const upstream = await simulatedUpstream({ seed: 11, count: 60, mediaBaseUrl: host.mediaBaseUrl });
    const dir = tempDir();
    const dbFile = join(dir, 'mirror.db');
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
    for (let kill = 1; kill <= KINDS.length; kill++) {
      // New bytes behind a third of the URLs, so every run downloads and writes files.
      const urls = listedMediaUrls(upstream, host);
      for (const url of urls) if (rng.chance(0.35)) host.bump(url);
      upstream.data.edit(3);
      const plan = drawPlan(rng, kill, Math.max(1, Math.floor(urls.length / 3)));
      const child = spawnChildMediaSync(upstream.url, dbFile, host.url, mediaDir);
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

      const store = openDatabase(dbFile);
      try {
        expect(store.sqlite.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
        expect(await mediaProblems(store, mediaDir), `kill ${kill}`).toEqual({
          missingOrPartial: [],
          blobs: 0,
          versions: 0,
          dangling: 0,
        });
        // Recovery: the next run collects what the killed one left and mirrors everything.
        const summary = await runSync(syncConfig(upstream.url, media), {
          store,
          logger: silentLogger(),
        });
        expect(summary.media?.failed).toBe(0);
        expect(await mediaProblems(store, mediaDir)).toEqual({
          missingOrPartial: [],
          blobs: 0,
          versions: 0,
          dangling: 0,
        });
        expect(orphanObjects(store, mediaDir)).toEqual([]);
        expect(tempLeftovers(mediaDir)).toEqual([]);
        const open = store.sqlite
          .prepare('select count(distinct url) from media_versions where valid_to_run is null')
          .pluck()
          .get();
        expect(open).toBe(listedMediaUrls(upstream, host).length);
      } finally {
        store.close();
      }
    }
    console.log(landed.join('\n'));
  });
});
