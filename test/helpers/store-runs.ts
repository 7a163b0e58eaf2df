import { loadConfig } from '../../src/config/load-config.js';
import type { RunCommit } from '../../src/db/run-commit.js';
import type { Store } from '../../src/db/store.js';
import { bodyHash } from '../../src/sync/body-hash.js';
import { succeededRunOutbox } from '../../src/webhooks/outbox.js';

/** Every event type, `sync.failed` after 3 failed runs: the defaults. */
const webhookDefaults = loadConfig({}).webhooks;

let counter = 0;

/**
 * Records a succeeded run that added one coworker (the earlier ones stay listed), with its webhook
 * outbox, through the store's own commit: recordRunWithChange for any store, without a crawl.
 */
export async function commitRunWithChange(store: Store, urls: readonly string[]): Promise<number> {
  const run = await store.beginRun('http://upstream.invalid');
  const current = await store.currentListing(bodyHash);
  const uuid = (++counter).toString(36).padStart(32, '0');
  const body = JSON.stringify({ uuid, name: `Person ${counter}` });
  const unchanged = current.appearances.length;
  await store.commitRun({
    runId: run.id,
    finishedAt: new Date().toISOString(),
    diff: {
      placements: [
        ...current.appearances.map((a) => ({ kind: 'keep' as const, versionId: a.versionId })),
        { kind: 'new', uuid, slot: 0, body, hash: bodyHash(body) },
      ],
      closedVersionIds: [],
      events: [{ uuid, slot: 0, kind: 'added', field: null, oldValue: null, newValue: body }],
      newCoworkers: [uuid],
      removedCoworkers: [],
      returnedCoworkers: [],
      counts: { added: 1, changed: 0, removed: 0, returned: 0, unchanged },
    },
    positions: current.positions,
    pages: 1,
    pageSize: 100,
    optionsBody: null,
    unknownFields: [],
    media: null,
    outbox: succeededRunOutbox({ ...webhookDefaults, urls }),
  });
  await store.releaseRun(run.id);
  return run.id;
}

const KINDS = ['added', 'changed', 'changed', 'changed', 'removed', 'returned'] as const;

/**
 * One succeeded run (run 1, of an empty listing) and `count` invented change rows (ids 1..count),
 * committed through the store's commitRun: writeChangeRows for any store. Values carry what a CSV
 * must quote (commas, quotes, line breaks) and non-ASCII text.
 */
export async function commitChangeRows(store: Store, count: number): Promise<void> {
  const run = await store.beginRun('http://127.0.0.1:8000');
  const events = Array.from({ length: count }, (_, i) => {
    const kind = KINDS[i % KINDS.length] ?? 'changed';
    const uuid = `0000${String(i % 5000).padStart(4, '0')}-0000-4000-8000-000000000000`;
    const entry = JSON.stringify({ uuid, name: `Zoë "Test" ${i}`, post: 'Dev, ops\nand more' });
    const changed = kind === 'changed';
    return {
      uuid,
      slot: 0,
      kind,
      field: changed ? 'name' : null,
      oldValue: changed ? JSON.stringify(`Name ${i}`) : kind === 'removed' ? entry : null,
      newValue: changed ? JSON.stringify(`Name, ${i}+1`) : kind === 'removed' ? null : entry,
    };
  });
  await store.commitRun(bareCommit(run.id, '2025-03-01T10:00:00.000Z', events));
  await store.releaseRun(run.id);
}

/** A commit with no listing, media or outbox: only `events`, for tests of the change rows or the commit itself. */
export function bareCommit(
  runId: number,
  finishedAt: string,
  events: RunCommit['diff']['events'] = [],
): RunCommit {
  return {
    runId,
    finishedAt,
    diff: {
      placements: [],
      closedVersionIds: [],
      events,
      newCoworkers: [],
      removedCoworkers: [],
      returnedCoworkers: [],
      counts: { added: 0, changed: 0, removed: 0, returned: 0, unchanged: 0 },
    },
    positions: [],
    pages: 1,
    pageSize: 8,
    optionsBody: null,
    unknownFields: [],
    media: null,
    outbox: null,
  };
}
