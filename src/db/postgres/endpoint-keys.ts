import type pg from 'pg';
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
import { rows, run, transaction } from './sql.js';

/**
 * The store's endpoint keys (src/db/endpoint-keys.ts), as src/db/sqlite/endpoint-keys.ts does on
 * SQLite: a database without a key gets one and its rows are re-keyed, in one transaction. Safe
 * when instances open at once: a second opener's insert of the key waits for the first's
 * transaction to commit, then does nothing; it reads the first's key and finds nothing left to
 * convert.
 */
export async function pgEndpointKeys(pool: pg.Pool): Promise<EndpointKeys> {
  const known = await keptIdentityValue(pool, ENDPOINT_KEY_NAME);
  // The usual open: a key, and no row left in clear; nothing to write.
  if (known !== undefined && (await rows(pool, CLEAR_ENDPOINTS_SQL)).length === 0)
    return new EndpointKeys(known);
  return transaction(pool, async ({ client }) => {
    const key = await identityEntry(client, ENDPOINT_KEY_NAME, newEndpointKeyText);
    const keys = new EndpointKeys(key.value);
    // Only the transaction that made the key re-keys the ids written before it.
    const former = key.created;
    const endpoints = await rows<EndpointRow>(
      client,
      'select id, url from webhook_endpoints order by id for update',
    );
    const digestIds = former
      ? (await rows<{ webhook_id: string }>(client, DIGEST_MESSAGE_IDS_SQL)).map((r) => r.webhook_id)
      : [];
    await applyPlan(client, rekeyPlan(keys, endpoints, digestIds, former));
    return keys;
  });
}

async function applyPlan(client: pg.ClientBase, plan: RekeyPlan): Promise<void> {
  for (const row of plan.renamed) {
    await run(client, 'update webhook_endpoints set url = $1 where id = $2', [row.url, row.id]);
  }
  for (const { from, into } of plan.merged) {
    await run(client, 'update webhook_deliveries set endpoint_id = $1 where endpoint_id = $2', [into, from]);
    await run(client, 'delete from webhook_endpoints where id = $1', [from]);
  }
  if (plan.messages.length === 0) return;
  // A digest message per target and period: a year of hourly digests is thousands, one statement.
  await run(
    client,
    `update webhook_messages m set webhook_id = n.keyed
       from unnest($1::text[], $2::text[]) as n(former, keyed) where m.webhook_id = n.former`,
    [plan.messages.map((m) => m.from), plan.messages.map((m) => m.to)],
  );
}
