import type { OutboxChannel } from './enums.js';
import type { ChangeRow, RunRow } from './schema.js';

/** The name (and post) a coworker's appearance had when a change was recorded. */
export interface ChangeSubject {
  name: string;
  post: string;
}

/**
 * A run's stage (run-stage.ts) and what its commit writes besides the listing the stage holds, as
 * plain data: the same for every dialect. The sync builds it (the media phase, the webhook
 * composer); the store writes it in the run's one transaction.
 */

/** One appearance of a coworker in the listing currently stored, in listing order. */
export interface StoredAppearance {
  versionId: number;
  uuid: string;
  slot: number;
  /** sha1 (base64) of the stored entry text. */
  hash: string;
}

/** The last state of an appearance that was removed and is not back (its slot's newest version). */
export interface RemovedAppearance extends StoredAppearance {
  body: string;
}

export type RunCounts = Pick<RunRow, 'added' | 'changed' | 'removed' | 'returned' | 'unchanged'>;

/** What one media URL gave this run (its file, when fetched, is already durable). */
export type MediaResultInput =
  | {
      kind: 'fetched';
      sha256: string;
      size: number;
      contentType: string;
      etag: string | null;
      lastModified: string | null;
    }
  | { kind: 'revalidated'; etag: string | null; lastModified: string | null }
  | { kind: 'failed'; code: string; message: string };

/** The media phase's outcome, written in the run's own transaction. */
export interface MediaCommit {
  items: readonly { url: string; heldSha256: string | null; result: MediaResultInput }[];
  /** Every allowed media URL the listing names. */
  listed: ReadonlySet<string>;
  counts: { fetched: number; revalidated: number; failed: number; bytes: number };
  /** The media URLs a parsed entry names, by field: where a `media_changed` change is recorded. */
  refsOf: (entry: unknown) => readonly { field: string; url: string }[];
}

export interface OutboxMessage {
  type: string;
  body: string;
}

/** What the webhook composer reads, inside the transaction that records the run. */
export interface OutboxFacts {
  /** The run as just recorded. */
  run: RunRow;
  /** The store's first listing (FIRST_LISTING_RUN_SQL), this run's id when it is that run; null before any. */
  firstListingRun: number | null;
  /** Failed runs in a row just before this one (aborted runs neither extend nor break a streak). */
  failedBefore: number;
  /** This run's changes, oldest first; iterate to the end before yielding a message. */
  changes: () => Iterable<ChangeRow>;
  /** This run's changes with ids in [fromId, toId], oldest first. */
  changesBetween: (fromId: number, toId: number) => ChangeRow[];
  /** The name and post of each change's coworker, by change id. */
  subjectsOf: (rows: readonly ChangeRow[]) => ReadonlyMap<number, ChangeSubject>;
  /** When the snapshot still served was taken (the latest succeeded run before this one), or null. */
  servingSince: string | null;
  /**
   * When the failure streak began: the start of the first failed run after the last succeeded one,
   * counting this run when it failed; null when there is no streak.
   */
  streakSince: string | null;
  /** Each change's coworker entry as of this run (stored JSON text), by change id; none for unknown rows. */
  entriesOf: (rows: readonly ChangeRow[]) => ReadonlyMap<number, string>;
  /** The mirror's own path (`/media/<sha256>/<name>`) of the bytes it holds, as of this run, for an upstream media URL; null if none. */
  mirrorPathOf: (url: string) => string | null;
}

/** What a digest's composer reads, inside the transaction that writes it. */
export interface DigestFacts {
  /** The changes recorded in the period (from ≤ at < to), oldest first. */
  changes: () => Iterable<ChangeRow>;
  /** The store's first listing (FIRST_LISTING_RUN_SQL), whether or not in the period; null before any. */
  firstListingRun: number | null;
  /** The name and post of each change's coworker, by change id. */
  subjectsOf: (rows: readonly ChangeRow[]) => ReadonlyMap<number, ChangeSubject>;
}

/** A digest of one period for some targets: written once per target and period, whoever writes it. */
export interface DigestPlan {
  /** The period as ISO instants. */
  from: string;
  to: string;
  targetIds: readonly string[];
  /** The message of the period's changes; null when it has none (then nothing is written). */
  message: (facts: DigestFacts) => OutboxMessage | null;
}

/** The notifications a run calls for, and where they go (one pending delivery per endpoint). */
export interface OutboxPlan {
  /** The endpoints' keys (`Store.endpointKeys`), never their URLs. */
  urls: readonly string[];
  /** Whose sender the endpoints' rows go to; webhooks when not said. */
  channel?: OutboxChannel;
  messages: (facts: OutboxFacts) => Iterable<OutboxMessage>;
}

/** A run's end without data: failed or aborted, with a code and a reason a person can act on. */
export interface RunEnd {
  runId: number;
  status: 'failed' | 'aborted';
  error: { code: string; message: string };
  stats?: { pages?: number | null; entries?: number | null };
  outbox?: OutboxPlan | null;
  notify?: OutboxPlan | null;
}

/** A succeeded run's commit over its stage: what is not in the stage tables. */
export interface StageCommit {
  runId: number;
  finishedAt: string;
  counts: RunCounts;
  pages: number;
  pageSize: number;
  /** The upstream's OPTIONS body; null keeps the previous run's. */
  optionsBody: string | null;
  unknownFields: readonly { field: string; page: number; index: number }[];
  media: MediaCommit | null;
  outbox: OutboxPlan | null;
  /** The chat and e-mail notifications it calls for (NOTIFY_URLS), in the same transaction. */
  notify?: OutboxPlan | null;
}

/** One crawled entry, staged as its page arrives. */
export interface StagedEntry {
  /** 0-based position in the listing. */
  position: number;
  page: number;
  index: number;
  uuid: string;
  body: string;
  hash: string;
}

/** An entry of the new listing as the diff reads it first: no text. */
export type StagedNew = Pick<StagedEntry, 'position' | 'uuid' | 'hash'>;

/** An appearance of the current listing. */
export interface StagedHeld extends StoredAppearance {
  position: number;
}

/** Complete uuid groups: every appearance, new and held, of the uuids in (after, last]. */
export interface StageChunk {
  /** In uuid then position order. */
  news: StagedNew[];
  held: StagedHeld[];
  /** Every uuid of the chunk ever stored: true when tombstoned. */
  known: Map<string, boolean>;
  /** The chunk's last uuid, the key of the next; null when this was the last chunk. */
  last: string | null;
}

/** A change the commit writes, with the key that orders the run's changes. */
export interface StagedEvent {
  order: [phase: number, at: number, seq: number];
  uuid: string;
  slot: number;
  kind: string;
  field: string | null;
  oldValue: string | null;
  newValue: string | null;
  /** The entry is the body of the version opened at this listing position (added, returned). */
  refPosition: number | null;
  /** The entry is the body of this version (removed). */
  refVersion: number | null;
}

/** What the diff decided for a chunk of uuid groups. */
export interface StageOutcome {
  /** A kept version, or null: a new state of `uuid` in `slot` whose body is the staged entry's. */
  places: [position: number, versionId: number | null, uuid: string | null, slot: number | null][];
  closed: number[];
  events: StagedEvent[];
  coworkers: [uuid: string, kind: 'new' | 'returned' | 'removed', order: number][];
}

/** The stage of one run; `close` drops it (always call it, after the commit or a failure). */
export interface RunStage {
  /** Adds entries; a batch is one transaction. */
  append(entries: readonly StagedEntry[]): Promise<void>;
  /** Forgets every staged entry (the crawl starts over). */
  reset(): Promise<void>;
  entryCount(): Promise<number>;
  /** Copies the current listing into the stage (its hashes; `hashOf` for rows stored without one); how many. */
  holdCurrent(hashOf: (body: string) => string): Promise<number>;
  /** The next complete uuid groups after `after` ('' first), about `rows` rows of each side. */
  chunk(after: string, rows: number): Promise<StageChunk>;
  /** Staged entry texts at these positions. */
  entryTexts(positions: readonly number[]): Promise<Map<number, string>>;
  record(outcome: StageOutcome): Promise<void>;
  /**
   * The diff of a store that never held a coworker (a first sync), decided set-based instead of by
   * groups: every entry is added, each uuid's appearances in slots 0, 1, … in listing order, each
   * uuid a new coworker. Records the placements `record` would (the commit derives the changes and
   * new coworkers from them) and answers how many were added; null, with nothing recorded, when the
   * store holds any coworker (the groups' diff then decides).
   */
  recordFirstListing(): Promise<number | null>;
  /** Uuids listed more than once: how many, and the first `limit` in listing order. */
  repeatedUuids(limit: number): Promise<{ count: number; first: string[] }>;
  /**
   * Texts the run would store as a new state while they stand twice or more in the listing
   * (after `record`): how many, and the pages holding them.
   */
  exactCopies(): Promise<{ copies: number; pages: number[] }>;
  /** The staged texts of one page, in page order. */
  pageTexts(page: number): Promise<string[]>;
  /** Every staged text in listing order, read in batches. */
  texts(): AsyncIterable<string>;
  /** Writes the run from its stage in one transaction, with media, outbox and notifications. */
  commit(commit: StageCommit): Promise<void>;
  close(): Promise<void>;
}
