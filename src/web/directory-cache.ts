import type { DirectoryEntry } from '../db/store.js';
import type { Store } from '../db/store.js';

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

// Sorted by the folded name with plain comparisons: an Intl.Collator comparison is slow enough that
// the first request after a run spent most of its time sorting the names.
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Rows folded between two yields to the event loop: a few milliseconds of CPU, the most /healthz waits. */
const FOLD_CHUNK = 5_000;

const yieldToRequests = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Folds the rows a chunk at a time, letting requests in between, then sorts them (one synchronous
 * sort, kept short by plain string comparisons).
 */
async function build(entries: DirectoryEntry[]): Promise<FoldedEntry[]> {
  const folded: FoldedEntry[] = [];
  for (let start = 0; start < entries.length; start += FOLD_CHUNK) {
    if (start > 0) await yieldToRequests();
    for (const entry of entries.slice(start, start + FOLD_CHUNK)) {
      folded.push({ ...entry, folded: fold(`${entry.name}\n${entry.post}`), foldedName: fold(entry.name) });
    }
  }
  await yieldToRequests();
  return folded.sort(
    (a, b) => byText(a.foldedName, b.foldedName) || byText(a.uuid, b.uuid) || a.appearance - b.appearance,
  );
}

export interface DirectoryFailure {
  runId: number | null;
  error: unknown;
}

/**
 * The coworker directory, sorted by name. Building it reads every current version (CPU that grows
 * with the coworkers), so it is built once when the server starts and then once per new successful
 * run, by the first request that sees one. That request waits for it: answered from the previous
 * run's directory instead, a page asked for rarely lagged the served snapshot by several runs.
 * The run id and the rows are read in one transaction, so "as of run N" is the run shown. The first
 * build starts once the server listens (`warm()`), off the request path: before it, a large
 * mirror's start answered nothing until it was built, /healthz included. A page that needs the directory
 * before then waits for it; no other route does. Folding yields to the event loop between chunks.
 * Bounded by the number of coworkers × 2 × DIRECTORY_TEXT_CHARS characters.
 */
export class DirectoryCache {
  #runId: number | null = null;
  #entries: FoldedEntry[] = [];
  #failedRunId: number | null = null;
  #built: Promise<void> | null = null;
  readonly #store: Store;
  readonly #onError: (failure: DirectoryFailure) => void;

  constructor(store: Store, onError: (failure: DirectoryFailure) => void) {
    this.#store = store;
    this.#onError = onError;
  }

  /**
   * The first build, shared by every caller until it ends. A failed first build is said once (the
   * callers waiting on it get the error) and the next call tries again.
   */
  ready(): Promise<void> {
    this.#built ??= this.#rebuild().catch((error: unknown) => {
      this.#built = null;
      this.#onError({ runId: null, error });
      throw error;
    });
    return this.#built;
  }

  /** Starts the first build in the background (once the server listens); its failure is logged. */
  warm(): void {
    setImmediate(() => {
      this.ready().catch(() => undefined);
    });
  }

  /** The run whose listing the directory shows. */
  get runId(): number | null {
    return this.#runId;
  }

  async #rebuild(): Promise<void> {
    const read = await this.#store.directoryWithRun();
    const entries = await build(read.entries);
    this.#runId = read.runId;
    this.#entries = entries;
  }

  async entries(): Promise<FoldedEntry[]> {
    await this.ready();
    const runId = await this.#store.latestSucceededRunId();
    if (runId !== this.#runId && runId !== this.#failedRunId) {
      try {
        await this.#rebuild();
      } catch (error) {
        // The previous directory still answers, naming its own run; the next run tries again.
        this.#failedRunId = runId;
        this.#onError({ runId, error });
      }
    }
    return this.#entries;
  }

  /** Entries whose name or post contains `query` (accents and case ignored). */
  async search(query: string, status: 'present' | 'departed' | 'all'): Promise<FoldedEntry[]> {
    const needle = fold(query.trim());
    return (await this.entries()).filter(
      (entry) =>
        (status === 'all' || (status === 'present') === (entry.removedRun === null)) &&
        (needle === '' || entry.folded.includes(needle)),
    );
  }

  /** Uuids whose name contains `query`, in directory order. */
  async uuidsByName(query: string): Promise<string[]> {
    const needle = fold(query.trim());
    const out = new Set<string>();
    for (const entry of await this.entries()) if (entry.foldedName.includes(needle)) out.add(entry.uuid);
    return [...out];
  }
}
