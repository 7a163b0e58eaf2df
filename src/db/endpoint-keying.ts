import {
  CLEAR_ENDPOINTS_SQL,
  ENDPOINT_KEY_NAME,
  EndpointKeys,
  newEndpointKeyText,
  NOTIFY_ENDPOINT_PREFIX,
  WEBHOOK_ENDPOINT_PREFIX,
} from './endpoint-keys.js';
import type { SqlPort, TransactionPort } from './sql-port.js';
import { answeredOver, ask, type Steps } from './statement-steps.js';
import { identityEntry } from './store-identity.js';

// Keying a store's endpoints (src/db/endpoint-keys.ts), written once for both dialects as steps
// (src/db/statement-steps.ts): SQLite keys as the store opens, which is synchronous, PostgreSQL
// over its pool.

/**
 * In one write transaction: the store's key (made now if it has none), and its rows re-keyed. Only
 * the transaction that made the key re-keys the ids written before it: its `webhook:` and `notify:`
 * ids, and the target ids in digest messages' ids, are the plain digests the code before keys wrote;
 * each becomes its keyed id.
 */
export function* rekeying(dialect: SqlPort['dialect']): Steps<EndpointKeys> {
  const key = yield* identityEntry(ENDPOINT_KEY_NAME, newEndpointKeyText);
  const keys = new EndpointKeys(key.value);
  yield* rekeyEndpoints(dialect, keys, key.created);
  if (key.created) yield* rekeyDigests(dialect, keys);
  return keys;
}

/**
 * Each endpoint row gets its keyed id. A row that still holds a webhook URL in clear (written before
 * endpoints were keyed at all) becomes its URL's key, or, when a row holds that key already, hands
 * its deliveries to it.
 */
function* rekeyEndpoints(dialect: SqlPort['dialect'], keys: EndpointKeys, former: boolean): Steps<void> {
  const lock = dialect === 'postgres' ? ' for update' : '';
  const rows = yield* ask<[number, string][]>(
    'rows',
    `select id, url from webhook_endpoints order by id${lock}`,
  );
  const rename = (id: number, url: string) =>
    ask('run', 'update webhook_endpoints set url = ? where id = ?', [url, id]);
  const holder = new Map<string, number>();
  const clear: [number, string][] = [];
  for (const [id, url] of rows) {
    const keyed = keyedUrl(keys, url, former);
    if (keyed === null) {
      clear.push([id, url]);
      continue;
    }
    if (keyed !== url) yield* rename(id, keyed);
    holder.set(keyed, id);
  }
  for (const [id, url] of clear) {
    const keyed = keys.webhook(url);
    const into = holder.get(keyed);
    if (into === undefined) {
      yield* rename(id, keyed);
      holder.set(keyed, id);
    } else {
      yield* ask('run', 'update webhook_deliveries set endpoint_id = ? where endpoint_id = ?', [into, id]);
      yield* ask('run', 'delete from webhook_endpoints where id = ?', [id]);
    }
  }
}

/** The row's key after re-keying; null for a URL held in clear. */
function keyedUrl(keys: EndpointKeys, url: string, former: boolean): string | null {
  const prefix = [WEBHOOK_ENDPOINT_PREFIX, NOTIFY_ENDPOINT_PREFIX].find((kind) => url.startsWith(kind));
  if (prefix === undefined) return null;
  if (!former) return url;
  const digest = url.slice(prefix.length);
  return prefix === WEBHOOK_ENDPOINT_PREFIX
    ? keys.webhookOfDigest(digest)
    : `${prefix}${keys.notifyTarget(digest)}`;
}

const DIGEST_ID = /^digest_([0-9a-f]{24})_(.+)$/;

/** Digest messages' `webhook_id`s (`digest_<target id>_<period end>`) with the target's keyed id. */
function* rekeyDigests(dialect: SqlPort['dialect'], keys: EndpointKeys): Steps<void> {
  const ids = yield* ask<[string][]>(
    'rows',
    "select webhook_id from webhook_messages where substr(webhook_id, 1, 7) = 'digest_'",
  );
  const messages = ids.flatMap(([from]) => {
    const match = DIGEST_ID.exec(from);
    return match?.[1] && match[2] ? [{ from, to: `digest_${keys.notifyTarget(match[1])}_${match[2]}` }] : [];
  });
  if (dialect === 'sqlite') {
    const message = 'update webhook_messages set webhook_id = ? where webhook_id = ?';
    for (const { from, to } of messages) yield* ask('run', message, [to, from]);
  } else if (messages.length > 0) {
    // A digest message per target and period: a year of hourly digests is thousands, one statement.
    yield* ask(
      'run',
      `update webhook_messages m set webhook_id = n.keyed
         from unnest(?::text[], ?::text[]) as n(former, keyed) where m.webhook_id = n.former`,
      [messages.map((m) => m.from), messages.map((m) => m.to)],
    );
  }
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
