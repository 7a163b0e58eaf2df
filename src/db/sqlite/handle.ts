import type Database from 'better-sqlite3';

/** The SQLite connection behind the store; only src/db/ reaches past the operations to it. */
export interface SqliteHandle {
  /** The raw handle, for pragmas, the backup API and hot-path prepared statements. */
  readonly sqlite: Database.Database;
  readonly file: string;
  /** Opened `immutable` (a WAL file in a folder this process cannot write): SQLite reads it as is. */
  readonly immutable: boolean;
  /**
   * Null while the path still names the file this handle opened; otherwise what happened to it
   * (deleted, or replaced by another file): this handle keeps reading the old, unlinked one.
   */
  readonly fileProblem: () => string | null;
  readonly close: () => void;
}
