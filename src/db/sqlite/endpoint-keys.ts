import type Database from 'better-sqlite3';
import {
  CLEAR_ENDPOINTS_SQL,
  DIGEST_MESSAGE_IDS_SQL,
  ENDPOINT_KEY_NAME,
  EndpointKeys,
  newEndpointKeyText,
  rekeyPlan,
  type EndpointRow,
  type RekeyPlan,
} from '../endpoint-keys.js';
import { identityEntry, keptIdentityValue } from './identity.js';

/**
 * The store's endpoint keys (src/db/endpoint-keys.ts). Opened for writing, a store without a key
 * gets one, and its rows are re-keyed, in one IMMEDIATE transaction: a second process opening it
 * meanwhile waits, then finds the key and nothing left to do. A read-only store not yet keyed (the
 * table a pending migration adds is missing, say) gets keys that match none of its rows.
 */
export function sqliteEndpointKeys(sqlite: Database.Database, writable: boolean): EndpointKeys {
  const known = keptIdentityValue(sqlite, ENDPOINT_KEY_NAME);
  if (!writable) return known === undefined ? EndpointKeys.unmatched() : new EndpointKeys(known);
  // The usual open: a key, and no row left in clear; nothing to write.
  if (known !== undefined && sqlite.prepare(CLEAR_ENDPOINTS_SQL).all().length === 0)
    return new EndpointKeys(known);
  return sqlite
    .transaction(() => {
      const key = identityEntry(sqlite, ENDPOINT_KEY_NAME, newEndpointKeyText);
      const keys = new EndpointKeys(key.value);
      const endpoints = sqlite
        .prepare('select id, url from webhook_endpoints order by id')
        .all() as EndpointRow[];
      // Only the transaction that made the key re-keys the ids written before it.
      const former = key.created;
      const digestIds = former ? (sqlite.prepare(DIGEST_MESSAGE_IDS_SQL).pluck().all() as string[]) : [];
      applyPlan(sqlite, rekeyPlan(keys, endpoints, digestIds, former));
      return keys;
    })
    .immediate();
}

function applyPlan(sqlite: Database.Database, plan: RekeyPlan): void {
  const rename = sqlite.prepare('update webhook_endpoints set url = ? where id = ?');
  for (const row of plan.renamed) rename.run(row.url, row.id);
  const move = sqlite.prepare('update webhook_deliveries set endpoint_id = ? where endpoint_id = ?');
  const drop = sqlite.prepare('delete from webhook_endpoints where id = ?');
  for (const { from, into } of plan.merged) {
    move.run(into, from);
    drop.run(from);
  }
  const message = sqlite.prepare('update webhook_messages set webhook_id = ? where webhook_id = ?');
  for (const { from, to } of plan.messages) message.run(to, from);
}
