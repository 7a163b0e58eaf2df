import type { Output } from '../../src/cli/history-commands.js';
import { describe, expect, it } from 'vitest';
import { runChangesCommand, runRunsCommand } from '../../src/cli/history-commands.js';
import { summaryLine } from '../../src/cli/sync-command.js';
import { loadConfig } from '../../src/config/load-config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { databaseEnv, STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { listedMediaUrls, mediaRig, sha256, type RigStore } from './harness.js';

/** Two runs: all files fetched, then one URL with new bytes and one failing. */
async function twoRuns(store: RigStore) {
  const rig = await mediaRig({ count: 6 }, store);
  const first = await rig.sync();
  const urls = listedMediaUrls(rig.upstream, rig.host);
  const bumped = urls.find((u) => u.endsWith('.png')) ?? '';
  const failing = urls.find((u) => u !== bumped) ?? '';
  const oldSha = sha256(rig.host.fileAt(bumped)?.bytes ?? Buffer.alloc(0));
  rig.host.bump(bumped);
  rig.host.fail(failing, 500);
  const second = await rig.sync();
  const newSha = sha256(rig.host.fileAt(bumped)?.bytes ?? Buffer.alloc(0));
  return { rig, first, second, urls, bumped, oldSha, newSha };
}

describe.each(STORE_KINDS)(
  'media counts and media_changed in the CLI, the API and the metrics on %s',
  (kind) => {
    const fresh = storeMaker(kind);

    it('the runs API and the runs command carry each run’s media counts', async () => {
      const { rig, first, second, urls } = await twoRuns(await fresh());
      const mirror = await startMirror(rig.store);
      const runs = (await (await fetch(`${mirror.url}/api/mirror/runs/`)).json()) as {
        results: { id: number; media?: unknown }[];
      };
      expect(runs.results.map((r) => ({ id: r.id, media: r.media }))).toEqual([
        { id: second.runId, media: { ...second.media } },
        { id: first.runId, media: { ...first.media } },
      ]);
      expect(second.media).toMatchObject({ fetched: 1, revalidated: urls.length - 2, failed: 1 });
      const one = (await (await fetch(`${mirror.url}/api/mirror/runs/${first.runId}/`)).json()) as {
        media?: unknown;
      };
      expect(one.media).toEqual(first.media);
      expect(summaryLine(second)).toContain(
        `; media: 1 fetched, ${urls.length - 2} revalidated, 1 failed, ${second.media?.bytes ?? 0} bytes (`,
      );
      const lines: string[] = [];
      await runRunsCommand(loadConfig(databaseEnv(rig.store)), 10, false, plainOutput(lines));
      expect(lines.find((line) => line.startsWith(`  ${second.runId} `))).toContain(
        `media: 1 fetched, ${urls.length - 2} unchanged, 1 failed (${second.media?.bytes ?? 0} B)`,
      );
    });

    it('the change feed, its filter and the changes command show media_changed with both hashes', async () => {
      const { rig, second, bumped, oldSha, newSha } = await twoRuns(await fresh());
      const mirror = await startMirror(rig.store);
      const feed = (await (await fetch(`${mirror.url}/api/mirror/changes/?kind=media_changed`)).json()) as {
        results: Record<string, unknown>[];
      };
      expect(feed.results.length).toBeGreaterThan(0);
      expect(feed.results[0]).toMatchObject({
        run: second.runId,
        kind: 'media_changed',
        old: { url: bumped, sha256: oldSha },
        new: { url: bumped, sha256: newSha },
      });
      const lines: string[] = [];
      await runChangesCommand(
        loadConfig(databaseEnv(rig.store)),
        {
          since: undefined,
          until: undefined,
          field: undefined,
          uuid: undefined,
          kind: 'media_changed',
          limit: 10,
          json: false,
        },
        plainOutput(lines),
      );
      expect(lines[1]).toContain(
        `▣ new images bytes at the same address (${bumped.split('/').pop() ?? ''}) ${oldSha.slice(0, 12)} → ${newSha.slice(0, 12)}`,
      );
    });

    it('/metrics exports the media figures', async () => {
      const { rig, urls } = await twoRuns(await fresh());
      const mirror = await startMirror(rig.store);
      const text = await (await fetch(`${mirror.url}/metrics`)).text();
      expect(text).toContain('coworker_mirror_media_items{outcome="failed",scope="last_run"} 1');
      expect(text).toContain(
        `coworker_mirror_media_items{outcome="fetched",scope="total"} ${urls.length + 1}`,
      );
      expect(text).toMatch(/coworker_mirror_media_stored\{unit="files"\} [1-9]/);
      expect(text).toMatch(/coworker_mirror_media_downloaded_bytes\{scope="total"\} [1-9]/);
    });
  },
);

/** The CLI's human output without colour, collected line by line. */
function plainOutput(lines: string[]): Output {
  return { write: (line) => lines.push(line), style: { color: false, now: Date.now() } };
}
