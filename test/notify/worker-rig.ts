import { notificationRowsOf } from '../../src/db/open-store.js';
import { outboxOver } from '../../src/notify/outbox.js';
import type { Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/logger.js';
import { sendMessage } from '../../src/notify/send.js';
import { keyedTargets, parseTarget, type NotifyTarget } from '../../src/notify/targets.js';
import type { NotifyWorkerDeps } from '../../src/notify/channel.js';

/** NOTIFY_URLS entries as targets; an entry the parser refuses fails the test with its reason. */
export function parsedTargets(entries: readonly string[]): NotifyTarget[] {
  return entries.map((entry) => {
    const target = parseTarget(entry);
    if (typeof target === 'string') throw new Error(target);
    return target;
  });
}

/** A worker's dependencies as `start` gives them, on `store`'s outbox and keys, without pacing. */
export function workerDeps(store: Store, targets: readonly NotifyTarget[]): NotifyWorkerDeps {
  const rows = notificationRowsOf(store);
  if (rows === null) throw new Error('this store keeps no notification outbox');
  return {
    outbox: outboxOver(rows),
    targets: keyedTargets(targets, store.endpointKeys),
    send: sendMessage,
    timeoutMs: 5000,
    // Pacing is the services' limit, not what these tests check.
    sleep: () => Promise.resolve(),
    logger: silentLogger(),
    pollMs: 60_000,
  };
}
