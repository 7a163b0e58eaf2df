import { databaseSettingParsers } from './database-url.js';
import { settings } from './setting-table.js';

/** How long each kind of database work may wait (DATABASE_PROBE_TIMEOUT, …), in milliseconds. */
export interface DatabaseDeadlines {
  /** The reads of /readyz and /metrics. */
  probeTimeoutMs: number;
  /** One statement of the server or of a read command (pages, the history API, exports). */
  readTimeoutMs: number;
  /** A sync's wait for a lock another session holds. */
  syncLockTimeoutMs: number;
  /** One statement of a sync, an answer from a server that stopped answering included. */
  syncStatementTimeoutMs: number;
}

/**
 * The settings table's defaults, for a store opened without a Config (tests, benchmarks). Parsed
 * without zod, as a read command's config is: opening a store must not load it.
 */
export function defaultDeadlines(): DatabaseDeadlines {
  const parsed = (key: keyof DatabaseDeadlines): number => {
    const result = databaseSettingParsers.timeout(settings.database[key].default);
    if (!result.ok) throw new Error(`the default of ${settings.database[key].env} does not parse`);
    return result.value;
  };
  return {
    probeTimeoutMs: parsed('probeTimeoutMs'),
    readTimeoutMs: parsed('readTimeoutMs'),
    syncLockTimeoutMs: parsed('syncLockTimeoutMs'),
    syncStatementTimeoutMs: parsed('syncStatementTimeoutMs'),
  };
}

/** The deadlines given, each missing one at its default. */
export function deadlinesOf(given: Partial<DatabaseDeadlines>): DatabaseDeadlines {
  const defaults = defaultDeadlines();
  return {
    probeTimeoutMs: given.probeTimeoutMs ?? defaults.probeTimeoutMs,
    readTimeoutMs: given.readTimeoutMs ?? defaults.readTimeoutMs,
    syncLockTimeoutMs: given.syncLockTimeoutMs ?? defaults.syncLockTimeoutMs,
    syncStatementTimeoutMs: given.syncStatementTimeoutMs ?? defaults.syncStatementTimeoutMs,
  };
}
