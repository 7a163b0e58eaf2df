import type Database from 'better-sqlite3';
import { CLEAR_ENDPOINTS_SQL, ENDPOINT_KEY_NAME, EndpointKeys } from '../endpoint-keys.js';
import { rekeying } from '../endpoint-keying.js';
import { answeredNow } from '../statement-steps.js';

/**
 * The store's endpoint keys (src/db/endpoint-keying.ts), as the store opens. Opened for writing, a
 * store without a key gets one, and its rows are re-keyed, in one IMMEDIATE transaction: a second
 * process opening it meanwhile waits, then finds the key and nothing left to do. A read-only store
 * not yet keyed (the table a pending migration adds is missing, say) gets keys that match none of its rows.
 */
export function sqliteEndpointKeys(sqlite: Database.Database, writable: boolean): EndpointKeys {
  const known = keptKey(sqlite);
  if (!writable) return known === undefined ? EndpointKeys.unmatched() : new EndpointKeys(known);
  // The usual open: a key, and no row left in clear; nothing to write.
  if (known !== undefined && sqlite.prepare(CLEAR_ENDPOINTS_SQL).all().length === 0)
    return new EndpointKeys(known);
  return sqlite
    .transaction(() =>
      answeredNow(rekeying('sqlite'), ({ kind, sql, params }) => {
        const statement = sqlite.prepare(sql);
        return kind === 'rows' ? statement.raw(true).all(...params) : statement.run(...params).changes;
      }),
    )
    .immediate();
}

/** The key kept, or undefined, without writing: the `store_identity` a pending migration adds may be missing. */
function keptKey(sqlite: Database.Database): string | undefined {
  const table = sqlite.prepare(
    "select 1 from sqlite_master where type = 'table' and name = 'store_identity'",
  );
  if (table.get() === undefined) return undefined;
  return sqlite.prepare('select value from store_identity where name = ?').pluck().get(ENDPOINT_KEY_NAME) as
    string | undefined;
}
