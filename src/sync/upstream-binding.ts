import type { Store } from '../db/store.js';
import { MirrorError } from '../errors.js';

/**
 * A database holds the history of one upstream: the one its latest successful run mirrored. Syncing
 * another into it would record everyone as removed and the newcomers as added, against history
 * that is not theirs, so it is refused unless asked for (`--rebind`), and the run that rebinds says so.
 */
async function boundUpstream(store: Store): Promise<string | null> {
  return (await store.latestSucceededRun())?.upstream ?? null;
}

/** Compares without credentials (a new password is the same site) and trailing slashes. */
function sameUpstream(a: string, b: string): boolean {
  const plain = (label: string) =>
    label.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, '$1').replace(/\/+$/, '');
  return plain(a) === plain(b);
}

/**
 * Throws UPSTREAM_MISMATCH (exit 2) when the database mirrors another upstream and `rebind` is off;
 * returns the upstream being left behind when rebinding, else null.
 */
export async function checkUpstreamBinding(
  store: Store,
  label: string,
  options: { rebind: boolean },
): Promise<string | null> {
  const bound = await boundUpstream(store);
  if (bound === null || sameUpstream(bound, label)) return null;
  if (options.rebind) return bound;
  throw new MirrorError(
    'UPSTREAM_MISMATCH',
    `database ${store.file} mirrors ${bound}, not ${label}. ` +
      `Use another database for this upstream (--db or DATABASE_PATH), or pass --rebind to mirror ${label} ` +
      'into this one from now on (the run records the switch)',
    { file: store.file, bound, requested: label },
  );
}

/** Marks the run that switched the database to a new upstream. */
export function recordRebind(store: Store, runId: number, from: string): Promise<void> {
  return store.recordRebind(runId, from);
}
