import { coworkerDirectory, type DirectoryEntry } from '../db/page-queries.js';
import { latestSucceededRunId } from '../db/queries.js';
import type { MirrorDatabase } from '../db/open.js';

export interface FoldedEntry extends DirectoryEntry {
  /** Lower case without accents, for "jose" to find "José". */
  folded: string;
  foldedName: string;
}

export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/**
 * The coworker directory, sorted by name, rebuilt only when a new successful run exists: it is the
 * same for every request in between, and rebuilding it reads every current version. Bounded by the
 * number of coworkers × 2 × DIRECTORY_TEXT_CHARS characters (names and posts are cut).
 */
export class DirectoryCache {
  #runId: number | null | undefined = undefined;
  #entries: FoldedEntry[] = [];
  readonly #store: MirrorDatabase;

  constructor(store: MirrorDatabase) {
    this.#store = store;
  }

  entries(): FoldedEntry[] {
    const runId = latestSucceededRunId(this.#store);
    if (runId !== this.#runId) {
      this.#entries = coworkerDirectory(this.#store)
        .map((entry) => ({
          ...entry,
          folded: fold(`${entry.name}\n${entry.post}`),
          foldedName: fold(entry.name),
        }))
        .sort(
          (a, b) =>
            collator.compare(a.name, b.name) || a.uuid.localeCompare(b.uuid) || a.appearance - b.appearance,
        );
      this.#runId = runId;
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
