import {
  CLEAR_ENDPOINTS_SQL,
  DIGEST_MESSAGE_IDS_SQL,
  ENDPOINT_KEY_NAME,
  EndpointKeys,
  newEndpointKeyText,
  rekeyPlan,
} from './endpoint-keys.js';
import type { SqlPort, TransactionPort } from './sql-port.js';
import { answeredOver, ask, type Steps } from './statement-steps.js';
import { identityEntry } from './store-identity.js';

// Keying a store's endpoints (src/db/endpoint-keys.ts), written once for both dialects as steps
// (src/db/statement-steps.ts): SQLite keys as the store opens, which is synchronous, PostgreSQL
// over its pool.

/**
 * In one write transaction: the store's key (made now if it has none), and its rows re-keyed. Only
 * the transaction that made the key re-keys the ids written before it.
 */
export function* rekeying(dialect: SqlPort['dialect']): Steps<EndpointKeys> {
  const key = yield* identityEntry(ENDPOINT_KEY_NAME, newEndpointKeyText);
  const keys = new EndpointKeys(key.value);
  const former = key.created;
  const lock = dialect === 'postgres' ? ' for update' : '';
  const endpoints = yield* ask<[number, string][]>(
    'rows',
    `select id, url from webhook_endpoints order by id${lock}`,
  );
  const digestIds = former ? (yield* ask<[string][]>('rows', DIGEST_MESSAGE_IDS_SQL)).map(([id]) => id) : [];
  const plan = rekeyPlan(
    keys,
    endpoints.map(([id, url]) => ({ id, url })),
    digestIds,
    former,
  );
  for (const row of plan.renamed) {
    yield* ask('run', 'update webhook_endpoints set url = ? where id = ?', [row.url, row.id]);
  }
  for (const { from, into } of plan.merged) {
    yield* ask('run', 'update webhook_deliveries set endpoint_id = ? where endpoint_id = ?', [into, from]);
    yield* ask('run', 'delete from webhook_endpoints where id = ?', [from]);
  }
  if (dialect === 'sqlite') {
    const message = 'update webhook_messages set webhook_id = ? where webhook_id = ?';
    for (const { from, to } of plan.messages) yield* ask('run', message, [to, from]);
  } else if (plan.messages.length > 0) {
    // A digest message per target and period: a year of hourly digests is thousands, one statement.
    yield* ask(
      'run',
      `update webhook_messages m set webhook_id = n.keyed
         from unnest(?::text[], ?::text[]) as n(former, keyed) where m.webhook_id = n.former`,
      [plan.messages.map((m) => m.from), plan.messages.map((m) => m.to)],
    );
  }
  return keys;
}

/**
 * The store's endpoint keys over the port (PostgreSQL): a database without a key gets one, and its
 * rows are re-keyed, in one write transaction.
 */
export async function endpointKeysOver(port: TransactionPort): Promise<EndpointKeys> {
  const [known] = await port.values<string>('select value from store_identity where name = ?', [
    ENDPOINT_KEY_NAME,
  ]);
  // The usual open: a key, and no row left in clear; nothing to write.
  if (known !== undefined && (await port.rows(CLEAR_ENDPOINTS_SQL)).length === 0)
    return new EndpointKeys(known);
  return port.write((tx) => answeredOver(tx, rekeying(tx.dialect)));
}
