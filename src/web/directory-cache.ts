import { coworkerDirectory, type DirectoryEntry } from '../db/page-queries.js';
import { latestSucceededRunId } from '../db/queries.js';
import type { MirrorDatabase } from '../db/open.js';

export interface FoldedEntry extends DirectoryEntry {
  /** Name and post in lower case without accents, for "jose" to find "José". */
  folded: string;
  foldedName: string;
}

// eslint-disable-next-line no-control-regex -- plain ASCII needs no Unicode normalization
const ASCII = /^[\u0000-\u007f]*$/;

function fold(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase();
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

// Sorted by the folded name with plain comparisons: Intl.Collator costs ~1 µs a comparison, which
// made the first request after a run spend most of a second sorting 10,000 names.
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function build(store: MirrorDatabase): FoldedEntry[] {
  return coworkerDirectory(store)
    .map((entry) => ({
      ...entry,
      folded: fold(`${entry.name}\n${entry.post}`),
      foldedName: fold(entry.name),
    }))
    .sort(
      (a, b) => byText(a.foldedName, b.foldedName) || byText(a.uuid, b.uuid) || a.appearance - b.appearance,
    );
}

export interface DirectoryFailure {
  runId: number | null;
  error: unknown;
}

/**
 * The coworker directory, sorted by name. Building it reads every current version (~50 ms of CPU
 * at 10,000 coworkers), so it is built once when the server starts and then once per new successful
 * run, by the first request that sees one. That request waits for it: answered from the previous
 * run's directory instead, a page asked for rarely lagged the served snapshot by several runs.
 * The run id and the rows are read in one transaction, so "as of run N" is the run shown.
 * Bounded by the number of coworkers × 2 × DIRECTORY_TEXT_CHARS characters.
 */
export class DirectoryCache {
  #runId: number | null = null;
  #entries: FoldedEntry[] = [];
  #failedRunId: number | null = null;
  readonly #store: MirrorDatabase;
  readonly #onError: (failure: DirectoryFailure) => void;

  constructor(store: MirrorDatabase, onError: (failure: DirectoryFailure) => void) {
    this.#store = store;
    this.#onError = onError;
    this.#rebuild();
  }

  /** The run whose listing the directory shows. */
  get runId(): number | null {
    return this.#runId;
  }

  #rebuild(): void {
    const read = this.#store.sqlite.transaction(() => ({
      runId: latestSucceededRunId(this.#store),
      entries: build(this.#store),
    }));
    ({ runId: this.#runId, entries: this.#entries } = read());
  }

  entries(): FoldedEntry[] {
    const runId = latestSucceededRunId(this.#store);
    if (runId !== this.#runId && runId !== this.#failedRunId) {
      try {
        this.#rebuild();
      } catch (error) {
        // The previous directory still answers, naming its own run; the next run tries again.
        this.#failedRunId = runId;
        this.#onError({ runId, error });
      }
    }
    return this.#entries;
  }

  /** Entries whose name or post contains `query` (accents and case ignored). */
  search(query: string, status: 'present' | 'departed' | 'all'): FoldedEntry[] {
    const needle = fold(query.trim());
    return this.entries().filter(
      (entry) =>
        (status === 'all' || (status === 'present') === (entry.removedRun === null)) &&
        (needle === '' || entry.folded.includes(needle)),
    );
  }

  /** Uuids whose name contains `query`, in directory order. */
  uuidsByName(query: string): string[] {
    const needle = fold(query.trim());
    const out = new Set<string>();
    for (const entry of this.entries()) if (entry.foldedName.includes(needle)) out.add(entry.uuid);
    return [...out];
  }
}
