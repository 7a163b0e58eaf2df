import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateCoworkers } from '../../src/simulated-upstream/generate.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

// PRUNE_REMOVED_AFTER and PRUNE_OLDER_THAN: the prune `coworker-mirror prune` does, run by each
// successful sync right after its commit, under the run's own lock.

const entries = generateCoworkers(5, 10, { dupRate: 0 });
const leaving = String(entries[3]?.uuid);

describe.each(STORE_KINDS)('the prune after a sync, on %s', (kind) => {
  const fresh = storeMaker(kind);

  async function twoRuns(given: Record<string, string>) {
    const store = await fresh();
    // Its own media folder: the default one, under the working directory, is any other test's too,
    // and a prune leaves alone a folder another mirror owns.
    const env = { MEDIA_DIR: join(tempDir(), 'media'), ...given };
    const upstream = await simulatedUpstream({ entries });
    const first = await sync(store, upstream, env);
    upstream.data.setEntries(
      entries.filter((_, i) => i !== 3).map((e, i) => (i === 0 ? { ...e, post: 'CTO' } : e)),
    );
    const second = await sync(store, upstream, env);
    return { store, first, second };
  }

  it('PRUNE_REMOVED_AFTER=0s forgets who left in the run that saw them leave', async () => {
    const { store, first, second } = await twoRuns({ PRUNE_REMOVED_AFTER: '0s' });
    // The first run removed nobody: it pruned nothing and recorded no prune.
    expect(first.pruned?.counts.coworkers).toBe(0);
    expect(second.pruned?.counts).toMatchObject({ coworkers: 1, versions: 1, changes: 2 });
    const finished = (await store.getRun(second.runId))?.finishedAt;
    expect(second.pruned?.horizon).toStrictEqual({ removedBefore: finished, historyBefore: null });
    expect(await storeRows(store, `select uuid from coworkers where uuid = '${leaving}'`)).toStrictEqual([]);
    expect(await storeRows(store, `select id from versions where uuid = '${leaving}'`)).toStrictEqual([]);
    expect(await storeRows(store, `select id from changes where uuid = '${leaving}'`)).toStrictEqual([]);
    expect(await storeRows(store, 'select count(*) as n from coworkers')).toStrictEqual([{ n: 9 }]);
    // The run itself is recorded as it would be without the prune.
    expect((await store.getRun(second.runId))?.removed).toBe(1);
  });

  it('PRUNE_OLDER_THAN=0s keeps the latest run whole and prunes what came before it', async () => {
    const { store, second } = await twoRuns({ PRUNE_OLDER_THAN: '0s' });
    const finished = (await store.getRun(second.runId))?.finishedAt;
    expect(second.pruned?.horizon).toStrictEqual({ removedBefore: null, historyBefore: finished });
    // The first run's ten `added` changes are gone; the second's change and removal stay.
    expect(await storeRows(store, 'select run_id, kind from changes order by id')).toStrictEqual([
      { run_id: second.runId, kind: 'changed' },
      { run_id: second.runId, kind: 'removed' },
    ]);
    // The changed coworker's first version went; the one who left keeps her last entry.
    expect(second.pruned?.counts).toMatchObject({ versions: 1, changes: 10 });
    expect(await storeRows(store, 'select count(*) as n from versions')).toStrictEqual([{ n: 10 }]);
  });

  it('PRUNE_OLDER_THAN: a run after a quiet one is not taken for the first listing once the changes before it are pruned', async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ entries: entries.slice(0, 9) });
    const env = {
      MEDIA_DIR: join(tempDir(), 'media'),
      PRUNE_OLDER_THAN: '0s',
      WEBHOOK_URLS: 'http://127.0.0.1:9/hook',
      NOTIFY_URLS: 'slack+http://127.0.0.1:9/services/T0/B0/secret',
    };
    const first = await sync(store, upstream, env);
    // Nothing changes: after its prune no change of any run is left.
    const quiet = await sync(store, upstream, env);
    expect(await storeRows(store, 'select count(*) as n from changes')).toStrictEqual([{ n: 0 }]);
    upstream.data.setEntries(entries);
    const joined = await sync(store, upstream, env);

    const messages = await storeRows(
      store,
      'select run_id, type, body from webhook_messages where run_id = ' + String(joined.runId),
    );
    const said = messages.map((m) => {
      const body = String(m.body);
      const chat = m.type === 'notify.changes' ? (JSON.parse(body) as { title: string }) : null;
      return { type: m.type, initial: /"initial":(true|false)/.exec(body)?.[1], title: chat?.title };
    });
    expect([first.runId, quiet.runId, joined.runId]).toStrictEqual([1, 2, 3]);
    expect(said).toStrictEqual([
      { type: 'coworkers.changed', initial: 'false', title: undefined },
      { type: 'notify.changes', initial: undefined, title: 'Team page: 1 joined' },
    ]);
  });

  it('prunes nothing when neither is set', async () => {
    const { store, second } = await twoRuns({});
    expect(second.pruned).toBeUndefined();
    expect(await storeRows(store, 'select count(*) as n from prunes')).toStrictEqual([{ n: 0 }]);
    expect(
      await storeRows(store, `select count(*) as n from versions where uuid = '${leaving}'`),
    ).toStrictEqual([{ n: 1 }]);
  });
});
