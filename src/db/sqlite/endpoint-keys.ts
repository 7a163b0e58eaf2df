import type Database from 'better-sqlite3';
import { CLEAR_ENDPOINTS_SQL, ENDPOINT_KEY_NAME, EndpointKeys } from '../endpoint-keys.js';
import { answeredNow, rekeying } from '../endpoint-keying.js';
import { keptIdentityValue } from './identity.js';

/**
 * The store's endpoint keys (src/db/endpoint-keying.ts), as the store opens. Opened for writing, a
 * store without a key gets one, and its rows are re-keyed, in one IMMEDIATE transaction: a second
 * process opening it meanwhile waits, then finds the key and nothing left to do. A read-only store
 * not yet keyed (the table a pending migration adds is missing, say) gets keys that match none of its rows.
 */
export function sqliteEndpointKeys(sqlite: Database.Database, writable: boolean): EndpointKeys {
  const known = keptIdentityValue(sqlite, ENDPOINT_KEY_NAME);
  if (!writable) return known === undefined ? EndpointKeys.unmatched() : new EndpointKeys(known);
  // The usual open: a key, and no row left in clear; nothing to write.
  if (known !== undefined && sqlite.prepare(CLEAR_ENDPOINTS_SQL).all().length === 0)
    return new EndpointKeys(known);
  return sqlite
    .transaction(() =>
      answeredNow(rekeying('sqlite'), ({ kind, sql, params }) =>
        kind === 'rows'
          ? sqlite
              .prepare(sql)
              .raw(true)
              .all(...params)
          : sqlite.prepare(sql).run(...params).changes,
      ),
    )
    .immediate();
}
