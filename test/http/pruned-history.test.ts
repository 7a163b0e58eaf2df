import { describe, expect, it } from 'vitest';
import { runChangesCommand, runHistoryCommand } from '../../src/cli/history-commands.js';
import type { Output } from '../../src/cli/output.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/logger.js';
import { pruneHistory } from '../../src/sync/prune-history.js';
import { startMirror } from '../helpers/mirror-server.js';
import { databaseEnv, STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { commitListing } from '../helpers/store-runs.js';

// Where history was pruned, every surface says so instead of showing a silent gap: the history
// API and the change feed (`pruned_before`), the pages (a note), the `history` and `changes`
// commands (a closing line), and the team as it was (refused before the horizon, 410).

const uuid = (n: number): string => `c0ffee${String(n).padStart(26, '0')}`;
const entry = (n: number, name: string, post: string): string =>
  JSON.stringify({ uuid: uuid(n), name, post });

const plain = (lines: string[]): Output => ({
  write: (line) => lines.push(line),
  style: { color: false, now: Date.now() },
});

const CHANGES = { since: undefined, until: undefined, field: undefined, uuid: undefined, kind: undefined };

/** Three runs: Ada and Bob; Bob becomes lead; Eve, listed from the start, leaves. */
async function history(store: Store): Promise<string[]> {
  const runs = [
    [entry(1, 'Ada', 'dev'), entry(2, 'Bob', 'ops'), entry(3, 'Eve', 'qa')],
    [entry(1, 'Ada', 'dev'), entry(2, 'Bob', 'ops lead'), entry(3, 'Eve', 'qa')],
    [entry(1, 'Ada', 'dev'), entry(2, 'Bob', 'ops lead')],
  ];
  const times = [];
  for (const bodies of runs) {
    const { runId } = await commitListing(store, bodies);
    times.push((await store.getRun(runId))?.finishedAt ?? '');
  }
  return times;
}

describe.each(STORE_KINDS)('what the surfaces say of pruned history, on %s', (kind) => {
  const fresh = storeMaker(kind);

  async function surfaces(store: Store) {
    const mirror = await startMirror(store);
    const get = async (path: string) => {
      const response = await fetch(`${mirror.url}${path}`);
      return { status: response.status, text: await response.text() };
    };
    const feed = JSON.parse((await get('/api/mirror/changes/')).text) as Record<string, unknown>;
    const bob = JSON.parse((await get(`/api/mirror/coworkers/${uuid(2)}/history/`)).text) as Record<
      string,
      unknown
    >;
    const config = loadConfig(databaseEnv(store));
    const historyLines: string[] = [];
    await runHistoryCommand(config, { uuid: uuid(2) }, false, plain(historyLines));
    const jsonLines: string[] = [];
    await runHistoryCommand(config, { uuid: uuid(2) }, true, plain(jsonLines));
    const changeLines: string[] = [];
    await runChangesCommand(config, { ...CHANGES, limit: 100, json: false }, plain(changeLines));
    return {
      feed: feed.pruned_before,
      history: bob.pruned_before,
      historyJson: (JSON.parse(jsonLines[0] ?? '{}') as Record<string, unknown>).pruned_before,
      changesPage: await get('/changes/'),
      coworkerPage: await get(`/coworkers/${uuid(2)}/`),
      historyLast: historyLines.at(-1),
      changesLast: changeLines.at(-1),
      get,
    };
  }

  it('say nothing before a prune, then name the horizons', async () => {
    const store = await fresh();
    const [run1, run2, run3] = await history(store);
    const before = await surfaces(store);
    expect([before.feed, before.history, before.historyJson]).toStrictEqual([null, null, null]);
    expect(before.changesPage.text).not.toContain('was pruned');
    expect((await before.get(`/team/?as_of=${run1 ?? ''}`)).status).toBe(200);

    // Run 2 is the oldest kept whole; Eve, who left in run 3, is forgotten.
    await pruneHistory(
      store,
      { removedAfterMs: null, olderThanMs: 1_000 },
      { media: null, logger: silentLogger(), now: new Date(Date.parse(run2 ?? '') + 1_000) },
    );
    await pruneHistory(
      store,
      { removedAfterMs: 0, olderThanMs: null },
      { media: null, logger: silentLogger() },
    );

    const after = await surfaces(store);
    // The feed lacks everything before run 2, and Eve's changes up to run 3.
    expect(after.feed).toBe(run3);
    // Bob's own history lacks only what came before run 2.
    expect([after.history, after.historyJson]).toStrictEqual([run2, run2]);
    expect(after.historyLast).toBe(`History before ${run2 ?? ''} was pruned.`);
    expect(after.changesLast).toBe(
      `History before ${run2 ?? ''} was pruned and coworkers removed by ${run3 ?? ''} were pruned.`,
    );
    expect(after.changesPage.text).toMatch(
      new RegExp(`History before <time datetime="${run2 ?? ''}">[^<]+</time> was pruned\\.`),
    );
    expect(after.changesPage.text).toMatch(
      new RegExp(`Coworkers removed by <time datetime="${run3 ?? ''}">[^<]+</time> were pruned\\.`),
    );
    expect(after.coworkerPage.text).toContain('was pruned.');
    expect(after.coworkerPage.text).not.toContain('Coworkers removed by');
    // The team as of run 1 or 2 is no longer what was listed then (Eve was): refused, saying why.
    const team = await after.get(`/team/?as_of=${run1 ?? ''}`);
    expect(team.status).toBe(410);
    expect(team.text).toContain(`Ask for as_of ${run3 ?? ''} or later.`);
    expect((await after.get(`/team/?as_of=${run3 ?? ''}`)).status).toBe(200);
  });
});
