import type pg from 'pg';
import type { PostgresTarget } from '../../config/database-url.js';
import type { HeldRunLock } from './run-lock.js';
import type { SessionBounds } from './session-bounds.js';

/** What every PostgreSQL operation works with: the pool and this instance. */
export interface PgContext {
  readonly pool: pg.Pool;
  readonly target: PostgresTarget;
  readonly instanceId: string;
  /** The bounds of this store's sessions (the pool's, and the run's own connections). */
  readonly bounds: SessionBounds;
  /** The run lock of each run this instance holds, by run id. */
  readonly locks: Map<number, HeldRunLock>;
}
