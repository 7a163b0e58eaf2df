import { loadConfig } from '../../src/config/load-config.js';
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
