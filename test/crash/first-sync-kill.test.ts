import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import { untilTestEnds } from '../helpers/scope.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { ChildRun } from './sync-child.js';

// A first sync into an empty SQLite store builds the indexes of versions, listing_positions and
// changes after their inserts, dropping them first, inside its commit (issue 21). Killed in that
// commit, it leaves the store as the migrations made it; let through, the same indexes.

const CHILD = fileURLToPath(new URL('./stage-kill-child.ts', import.meta.url));

const schemaOf = (store: MirrorDatabase): string[] =>
  store.sqlite
    .prepare("select type || ' ' || name || ': ' || coalesce(sql, '') from sqlite_schema order by type, name")
    .pluck()
    .all() as string[];

describe('a first sync into an empty SQLite store, SIGKILLed inside its commit', () => {
  it('leaves no run succeeded and every index as it was; the next one builds the same indexes', async () => {
    const file = join(tempDir(), 'mirror.db');
    const store = openDatabase(file);
    untilTestEnds(() => store.close());
    const migrated = schemaOf(store);
    expect(migrated.filter((s) => s.startsWith('index changes_'))).toHaveLength(4);
    const upstream = await simulatedUpstream({ seed: 5, count: 1200, dupRate: 0.05 });

    const child = new ChildRun(CHILD, [file, upstream.url, 'commit', '1']);
    const line = await child.waitFor((l) => l.marker !== undefined);
    expect(line, child.stderr).toMatchObject({ marker: 'kill', point: 'commit' });
    expect((await child.exited).signal).toBe('SIGKILL');

    expect(await store.latestSucceededRun()).toBeUndefined();
    expect(schemaOf(store)).toStrictEqual(migrated);
    for (const table of ['versions', 'listing_positions', 'changes', 'coworkers']) {
      expect(store.sqlite.prepare(`select count(*) from ${table}`).pluck().get(), table).toBe(0);
    }

    const summary = await sync(store, upstream);
    expect(summary.counts.added).toBe(1200);
    expect(schemaOf(store)).toStrictEqual(migrated);
    expect(store.sqlite.pragma('integrity_check')).toStrictEqual([{ integrity_check: 'ok' }]);
    const served = await store.listingAt((await store.latestSucceededRun())!);
    expect(served.entries.map((e) => JSON.parse(e) as unknown)).toStrictEqual(upstream.data.entries());
  }, 60_000);
});
