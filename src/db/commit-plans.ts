import type { Claim } from './store.js';
import { mirrorMediaPath } from './media-queries.js';
import type { MediaCommit } from './run-commit.js';
import type { ChangeRow } from './schema.js';

// The parts of a run's commit and of a delivery claim that are decisions over rows already read, not SQL.

export interface MediaChange {
  url: string;
  oldSha256: string;
  newSha256: string;
}

export interface MediaVersionWrites {
  /** media_versions ids whose span ends at this run. */
  close: number[];
  /** New versions, in the order the items came: [url, sha256]. */
  open: [url: string, sha256: string][];
  /** URLs whose bytes changed, for the `media_changed` changes. */
  changed: MediaChange[];
}

/**
 * A version opens where the bytes behind a URL are new; the versions of URLs no longer listed
 * close. `open` is each URL's open version before this run.
 */
export function mediaVersionWrites(
  open: ReadonlyMap<string, { id: number; sha256: string }>,
  media: Pick<MediaCommit, 'items' | 'listed'>,
): MediaVersionWrites {
  const writes: MediaVersionWrites = { close: [], open: [], changed: [] };
  for (const { url, heldSha256, result } of media.items) {
    const current = open.get(url);
    const sha256 =
      result.kind === 'fetched' ? result.sha256 : result.kind === 'revalidated' ? heldSha256 : null;
    // A failure keeps whatever version is open: the last good bytes stay served.
    if (sha256 === null || current?.sha256 === sha256) continue;
    if (current) writes.close.push(current.id);
    writes.open.push([url, sha256]);
    const before = current?.sha256 ?? heldSha256;
    if (before !== null && before !== sha256)
      writes.changed.push({ url, oldSha256: before, newSha256: sha256 });
  }
  for (const [url, version] of open) if (!media.listed.has(url)) writes.close.push(version.id);
  return writes;
}

/** A `media_changed` change as written: [uuid, slot, field, oldValue, newValue]. */
export type MediaChangeRow = [uuid: string, slot: number, field: string, oldValue: string, newValue: string];

/** A URL as it stands inside an entry's JSON text (a cheap test before parsing the entry). */
export const jsonSpelling = (url: string): string => JSON.stringify(url).slice(1, -1);

/**
 * One `media_changed` change per appearance and field that names a URL whose bytes changed,
 * from the current listing's entries in listing order.
 */
export function mediaChangeRows(
  entries: Iterable<[uuid: string, slot: number, body: string]>,
  changed: readonly MediaChange[],
  refsOf: MediaCommit['refsOf'],
): MediaChangeRow[] {
  const byUrl = new Map(changed.map((c) => [c.url, c]));
  const spellings = changed.map((c) => jsonSpelling(c.url));
  const out: MediaChangeRow[] = [];
  for (const [uuid, slot, body] of entries) {
    if (!spellings.some((spelling) => body.includes(spelling))) continue;
    const seen = new Set<string>();
    for (const ref of refsOf(JSON.parse(body))) {
      const change = byUrl.get(ref.url);
      const key = `${ref.field} ${ref.url}`;
      if (!change || seen.has(key)) continue;
      seen.add(key);
      out.push([
        uuid,
        slot,
        ref.field,
        JSON.stringify({ url: ref.url, sha256: change.oldSha256 }),
        JSON.stringify({ url: ref.url, sha256: change.newSha256 }),
      ]);
    }
  }
  return out;
}

/**
 * When the failure streak ending at `runId` began: the start of its first failed run, over the
 * failed and succeeded runs up to `runId`, newest first. A succeeded `runId` ends the streak of the
 * runs before it (its recovery speaks of theirs); aborted runs are not among the rows.
 */
export function streakSinceOf(
  runId: number,
  runsNewestFirst: Iterable<readonly [id: number, status: string, startedAt: string]>,
): string | null {
  let since: string | null = null;
  for (const [id, status, startedAt] of runsNewestFirst) {
    if (id === runId && status === 'succeeded') continue;
    if (status !== 'failed') break;
    since = startedAt;
  }
  return since;
}

/** The whole entry text a change stores (added, returned: the new; removed: the old); null for a field or media change. */
export function entryOfChange(row: Pick<ChangeRow, 'kind' | 'oldValue' | 'newValue'>): string | null {
  if (row.kind === 'removed') return row.oldValue;
  if (row.kind === 'added' || row.kind === 'returned') return row.newValue;
  return null;
}

/**
 * Each change's coworker entry at its run, by change id: the entry the change stores, else the
 * version text `versionBody` finds (none when it finds none).
 */
export function entriesOfChanges(
  rows: readonly ChangeRow[],
  versionBody: (row: ChangeRow) => string | null | undefined,
): Map<number, string> {
  const out = new Map<number, string>();
  for (const row of rows) {
    const body = entryOfChange(row) ?? versionBody(row);
    if (body !== undefined && body !== null) out.set(row.id, body);
  }
  return out;
}

/**
 * The mirror's path of a media URL's bytes as of a run, over that run's [url, sha256] pairs, read
 * by `load` once, on first use.
 */
export function mirrorPathReader(
  load: () => Iterable<readonly [url: string, sha256: string]>,
): (url: string) => string | null {
  let shas: Map<string, string> | null = null;
  return (url) => {
    const sha = (shas ??= new Map(load())).get(url);
    return sha === undefined ? null : mirrorMediaPath(sha, url);
  };
}

/** The head of one endpoint's queue, as a claim reads it. */
export interface QueueHead extends Claim {
  nextAttemptAt: string;
  leaseUntil: string | null;
}

/** Which heads to lease now, and when the first of the others becomes due. */
export function dueHeads(
  heads: readonly QueueHead[],
  options: { busyEndpoints: ReadonlySet<number>; now: number },
): { due: QueueHead[]; nextWakeAt: number | null } {
  const due: QueueHead[] = [];
  let nextWakeAt: number | null = null;
  for (const head of heads) {
    if (options.busyEndpoints.has(head.endpointId)) continue;
    const dueAt = Date.parse(head.nextAttemptAt);
    const leasedUntil = head.leaseUntil === null ? 0 : Date.parse(head.leaseUntil);
    if (dueAt > options.now || leasedUntil > options.now) {
      const at = Math.max(dueAt, leasedUntil);
      nextWakeAt = nextWakeAt === null ? at : Math.min(nextWakeAt, at);
      continue;
    }
    due.push(head);
  }
  return { due, nextWakeAt };
}
