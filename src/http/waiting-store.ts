import type { OpenedStore } from '../db/open-store.js';
import type { CommitWatchOptions } from '../db/store.js';
import { MirrorError } from '../errors.js';
import type { LocalSnapshot } from './local-snapshot-file.js';

/** A store that is not there yet, standing in for it until `connect` hands over the real one. */
export interface WaitingStore {
  /** Every caller's store: the local snapshot's answers and refusals now, the real store's once connected. */
  readonly store: OpenedStore;
  /** Whether the real store is in place. */
  readonly connected: boolean;
  /** Says why the database is away, for readiness and the refusals (the latest attempt's failure). */
  setCause(cause: string): void;
  /** Hands every call over to `real` and starts the commit watches asked for meanwhile, each told once. */
  connect(real: OpenedStore): void;
  /** Closes the real store, when there is one. */
  close(): Promise<void>;
}

interface Watch {
  onCommit: () => void;
  options: CommitWatchOptions;
  unwatch: (() => void) | null;
  stopped: boolean;
}

interface StandInDeps {
  label: string;
  local: LocalSnapshot;
  holdsBlobs: boolean;
  watches: Set<Watch>;
  refuse: () => Promise<never>;
  cause: () => string;
}

/** What the waiting store answers itself: the local snapshot's facts, readiness, and the watches kept for later. */
function standIns(deps: StandInDeps): Partial<Record<keyof OpenedStore, unknown>> {
  const { local, refuse, watches } = deps;
  const media = new Map(local.media.map((m) => [m.sha256, { size: m.size, contentType: m.contentType }]));
  const pairs = local.media.map((m): [string, string] => [m.url, m.sha256]);
  const { run } = local;
  const refusingBatches = () => ({
    [Symbol.asyncIterator]: () => ({ next: refuse }),
  });
  return {
    file: deps.label,
    integrityTarget: null,
    readerTarget: null,
    holdsBlobs: deps.holdsBlobs,
    storageProblem: () => null,
    // Nothing opened yet; once connected, the real store's close is called.
    close: () => Promise.resolve(),
    databaseProblem: () =>
      Promise.resolve(
        `serving the local snapshot of run ${run.runId} from ${run.fetchedAt.toISOString()} because the ` +
          `database is unavailable (${deps.cause()})`,
      ),
    // Nothing can be recovered while nothing answers; the first poll after `connect` does it.
    recoverDeadRuns: () => Promise.resolve(0),
    keptBlob: (sha256: string) => Promise.resolve(media.get(sha256)),
    mediaShasAt: (runId: number) => (runId === run.runId ? Promise.resolve(pairs) : refuse()),
    changesInBatches: refusingBatches,
    changesWithSubjects: refusingBatches,
    watchCommits: (onCommit: () => void, options: CommitWatchOptions) => {
      const watch: Watch = { onCommit, options, unwatch: null, stopped: false };
      watches.add(watch);
      return () => {
        watch.stopped = true;
        watches.delete(watch);
        watch.unwatch?.();
      };
    },
  };
}

/**
 * The store of a server started without its database: what the local snapshot holds answers what
 * the list endpoint and its media ask (the media rows, the run's media map), readiness says why the
 * database is away, and every other operation fails as the database away does (DB_ERROR, which the
 * pages and the API answer with their 503). Once `connect` is called, every property and call goes
 * to the real store, so the parts built on this one need not be built again.
 */
export function waitingStore(label: string, local: LocalSnapshot, holdsBlobs: boolean): WaitingStore {
  let real: OpenedStore | null = null;
  let cause = 'not connected yet';
  const watches = new Set<Watch>();
  const away = () =>
    new MirrorError('DB_ERROR', `the database ${label} is unavailable: ${cause}`, { database: label });
  const refuse = () => Promise.reject(away());
  const stand = standIns({ label, local, holdsBlobs, watches, refuse, cause: () => cause });
  // The real store's methods, bound once: every request after `connect` goes through this proxy.
  const bound = new Map<PropertyKey, unknown>();
  const store = new Proxy({} as OpenedStore, {
    get(_target, key) {
      if (real !== null) {
        if (bound.has(key)) return bound.get(key);
        const value: unknown = Reflect.get(real, key, real);
        if (typeof value !== 'function') return value;
        const method = (value as (...args: unknown[]) => unknown).bind(real);
        bound.set(key, method);
        return method;
      }
      // Not a thenable, nor anything else a symbol names: an `await` of the store must not wait on it.
      if (typeof key === 'symbol' || key === 'then') return undefined;
      if (key === 'endpointKeys') throw away();
      if (key in stand) return stand[key as keyof OpenedStore];
      return refuse;
    },
    has(_target, key) {
      return real !== null ? Reflect.has(real, key) : key in stand;
    },
  });
  return {
    store,
    get connected() {
      return real !== null;
    },
    setCause(text) {
      cause = text;
    },
    connect(opened) {
      real = opened;
      for (const watch of watches) {
        if (watch.stopped) continue;
        watch.unwatch = opened.watchCommits(watch.onCommit, watch.options);
        // Whatever committed while the database was away is caught up with at once.
        watch.onCommit();
      }
    },
    async close() {
      await real?.close();
    },
  };
}
