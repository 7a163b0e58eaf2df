import { awayCause, isDatabaseAway, reconnect } from '../db/database-away.js';
import { openStore, type OpenedStore, type OpenStoreOptions, type StoreChoice } from '../db/open-store.js';
import { MirrorError } from '../errors.js';
import type { Logger } from '../logger.js';
import { readOwnerFile, OWNER_FILE } from '../media/folder-owner.js';
import { readLocalSnapshot, type LocalSnapshot } from './local-snapshot-file.js';
import { localSnapshotMaxBytes, localSnapshotPath } from './local-snapshot-keeper.js';
import { waitingStore, type WaitingStore } from './waiting-store.js';

/** How a server's store opened: at once, or not (the database away) with the local snapshot to serve meanwhile. */
export type ServerStore =
  | { kind: 'open'; store: OpenedStore }
  | { kind: 'away'; waiting: WaitingStore; local: LocalSnapshot; cause: string };

export interface LocalStartPlace {
  /** The media folder the local snapshot is in. */
  mediaDir: string;
  /** SYNC_MAX_LISTING_BYTES, which bounds the local snapshot. */
  maxListingBytes: number;
}

/**
 * Opens the server's store. When PostgreSQL cannot be reached (down, restarting, no route) and the
 * media folder holds a local snapshot of this very mirror, whole, the server starts on that instead
 * and the store is connected later (`connectWhenBack`). Any other failure is thrown as it was; a
 * database away with no usable local snapshot is thrown too, saying why the snapshot was not used.
 */
export async function openServerStore(
  choice: StoreChoice,
  options: OpenStoreOptions,
  place: LocalStartPlace,
  logger: Logger,
): Promise<ServerStore> {
  try {
    return { kind: 'open', store: await openStore(choice, options) };
  } catch (error) {
    // SQLite's store is a file on this very disk: one it cannot open does not come back by waiting.
    if (choice.target.kind !== 'postgres' || !isDatabaseAway(error)) throw error;
    const found = await usableLocalSnapshot(choice.target.label, place);
    if (found.kind === 'refused') {
      logger.error({ reason: found.reason }, 'local snapshot refused; it is not served');
      throw withRefusal(error as MirrorError, found.reason);
    }
    const cause = awayCause(error);
    const waiting = waitingStore(choice.target.label, found.snapshot, true);
    waiting.setCause(cause);
    const { run } = found.snapshot;
    logger.warn(
      {
        cause,
        runId: run.runId,
        fetchedAt: run.fetchedAt.toISOString(),
        path: localSnapshotPath(place.mediaDir),
      },
      'database unavailable at start: serving the local snapshot until it answers',
    );
    return { kind: 'away', waiting, local: found.snapshot, cause };
  }
}

type Usable = { kind: 'found'; snapshot: LocalSnapshot } | { kind: 'refused'; reason: string };

/**
 * The local snapshot, when it is whole and this mirror's: the media folder's owner file names the
 * database's mirror id (readable without the database); a folder never claimed has none, and then
 * the database the snapshot names must be the one configured.
 */
async function usableLocalSnapshot(label: string, place: LocalStartPlace): Promise<Usable> {
  const read = await readLocalSnapshot(
    localSnapshotPath(place.mediaDir),
    localSnapshotMaxBytes(place.maxListingBytes),
  );
  if (read.kind === 'refused') return read;
  const { snapshot } = read;
  const path = localSnapshotPath(place.mediaDir);
  const owner = readOwnerFile(place.mediaDir);
  if (owner.kind === 'unreadable') {
    return { kind: 'refused', reason: `${path}: cannot tell whose it is (${owner.reason})` };
  }
  if (owner.kind === 'owner' && owner.owner.mirrorId !== snapshot.mirrorId) {
    return {
      kind: 'refused',
      reason:
        `${path}: written for another mirror (mirror id ${snapshot.mirrorId}, database ${snapshot.database}), ` +
        `while ${OWNER_FILE} names mirror id ${owner.owner.mirrorId}`,
    };
  }
  if (owner.kind === 'none' && snapshot.database !== label) {
    return {
      kind: 'refused',
      reason: `${path}: written for another database (${snapshot.database}), not ${label}`,
    };
  }
  return read;
}

function withRefusal(error: MirrorError, reason: string): MirrorError {
  return new MirrorError(
    error.code,
    `${error.message}; the local snapshot was not served: ${reason}`,
    { ...error.details, localSnapshot: reason },
    { cause: error.cause },
  );
}

/** The first wait of the background connection and its bound: a database back is noticed within seconds. */
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 5_000;

/**
 * Keeps opening the store in the background until it answers, then runs `complete` with it (the
 * checks and the start-up that needed it) and hands it to the waiting store. Settles when done or
 * when `signal` aborts (a store opened meanwhile is closed); rejects when the open fails for another
 * reason than the database away, or `complete` fails: the caller ends the process with it.
 */
export async function connectWhenBack(
  choice: StoreChoice,
  options: OpenStoreOptions,
  waiting: WaitingStore,
  deps: { logger: Logger; signal: AbortSignal; complete: (store: OpenedStore) => Promise<void> },
): Promise<void> {
  const opened = await reconnect(() => openStore(choice, options), {
    firstDelayMs: FIRST_RETRY_MS,
    maxDelayMs: MAX_RETRY_MS,
    logger: deps.logger,
    signal: deps.signal,
    onFailure: (cause) => waiting.setCause(cause),
  });
  if (opened === null) return;
  if (deps.signal.aborted) {
    await opened.close();
    return;
  }
  try {
    await deps.complete(opened);
  } catch (error) {
    if (!waiting.connected) await opened.close();
    throw error;
  }
}
