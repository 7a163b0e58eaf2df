import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IdentityName } from './enums.js';

// The outbox's endpoints are rows keyed by a string, never by the URL they stand for: a webhook URL
// carries its token (a deploy hook's path, `user:pw@`), a chat webhook too. A plain digest of the URL
// would still let anyone holding the database test a guessed URL offline, so every id is an HMAC
// under a random key the database keeps (`store_identity`'s `endpoint_id_key`), generated once,
// when a database is first opened for writing. Keyed over the URL's plain digest, so the ids written before there was a key
// (that digest itself) are re-keyed on open without the URLs.

/** A WEBHOOK_URLS endpoint's row: `webhook:<64 hex>`. */
export const WEBHOOK_ENDPOINT_PREFIX = 'webhook:';
/**
 * A notification target's row: `notify:<target id>`. Notifications share the outbox; their
 * endpoints' `channel` tells them apart from the webhooks'.
 */
export const NOTIFY_ENDPOINT_PREFIX = 'notify:';

/** The endpoint rows still holding a URL in clear (neither prefix): what a keyed store re-keys on open. */
export const CLEAR_ENDPOINTS_SQL = `select id, url from webhook_endpoints
  where substr(url, 1, ${WEBHOOK_ENDPOINT_PREFIX.length}) != '${WEBHOOK_ENDPOINT_PREFIX}'
    and substr(url, 1, ${NOTIFY_ENDPOINT_PREFIX.length}) != '${NOTIFY_ENDPOINT_PREFIX}'`;

/** The ids of the digest messages, whose target id a first key re-keys. */
export const DIGEST_MESSAGE_IDS_SQL =
  "select webhook_id from webhook_messages where substr(webhook_id, 1, 7) = 'digest_'";

/** The key's name among the store's named values (`store_identity`). */
export const ENDPOINT_KEY_NAME = 'endpoint_id_key' satisfies IdentityName;

const KEY_BYTES = 32;

/** A new key, as `store_identity` keeps it (hex). */
export function newEndpointKeyText(): string {
  return randomBytes(KEY_BYTES).toString('hex');
}

/** The plain SHA-256 of a webhook URL (normalised): in memory only, the input of its keyed id. */
export function webhookUrlDigest(url: string): string {
  const normalised = URL.canParse(url) ? new URL(url).href : url;
  return createHash('sha256').update(normalised).digest('hex');
}

/**
 * The ids of the outbox's endpoints in one store: each an HMAC, under the store's key, of its URL's
 * plain digest, domain-separated by kind. The same URL gets the same id in every process that opens
 * the store, and another id in another store. The key stays private: it is never serialised.
 */
export class EndpointKeys {
  readonly #key: Buffer;

  constructor(keyText: string) {
    if (!/^[0-9a-f]{64}$/.test(keyText)) throw new Error('store_identity holds no valid endpoint_id_key');
    this.#key = Buffer.from(keyText, 'hex');
  }

  /** A key no store holds: the ids it gives match no stored row (a read-only store not yet keyed). */
  static unmatched(): EndpointKeys {
    return new EndpointKeys(newEndpointKeyText());
  }

  #mac(domain: string, digest: string): string {
    return createHmac('sha256', this.#key).update(`${domain}\0`).update(digest).digest('hex');
  }

  /** The endpoint key of a WEBHOOK_URLS URL: `webhook:<64 hex>`. */
  webhook(url: string): string {
    return this.webhookOfDigest(webhookUrlDigest(url));
  }

  /** The endpoint key of a webhook URL known by its plain digest (a row written before keys). */
  webhookOfDigest(digest: string): string {
    return `${WEBHOOK_ENDPOINT_PREFIX}${this.#mac('coworker-mirror webhook endpoint', digest)}`;
  }

  /**
   * The id of a notification target (what `notify enable <id>` takes) from its URL's plain digest
   * (`NotifyTarget.digest` of the notification targets): 24 hex, short enough to type.
   */
  notifyTarget(digest: string): string {
    return this.#mac('coworker-mirror notify target', digest).slice(0, 24);
  }

  toJSON(): string {
    return '[endpoint keys]';
  }
}

/** An endpoint row as the re-keying reads it. */
export interface EndpointRow {
  id: number;
  url: string;
}

/** What re-keying changes, computed from the rows alone; each dialect applies it in one transaction. */
export interface RekeyPlan {
  /** Endpoint rows whose key changes. */
  renamed: EndpointRow[];
  /** A row holding a URL in clear whose key another row holds already: its deliveries move there. */
  merged: { from: number; into: number }[];
  /** Digest messages' `webhook_id`s (`digest_<target id>_<period end>`), from the former id to the keyed. */
  messages: { from: string; to: string }[];
}

const DIGEST_ID = /^digest_([0-9a-f]{24})_(.+)$/;

/**
 * The re-keying of a store's rows. `former`: the store had no key until now, so its `webhook:` and
 * `notify:` ids, and the target ids in digest messages' ids, are the plain digests the code before
 * keys wrote; each becomes its keyed id. A row that still holds a webhook URL in clear (written
 * before endpoints were keyed at all) becomes its URL's key, or, when a row holds that key already,
 * hands its deliveries to it.
 */
export function rekeyPlan(
  keys: EndpointKeys,
  endpoints: readonly EndpointRow[],
  digestMessageIds: readonly string[],
  former: boolean,
): RekeyPlan {
  const plan: RekeyPlan = { renamed: [], merged: [], messages: [] };
  const holder = new Map<string, number>();
  const clear: EndpointRow[] = [];
  for (const row of endpoints) {
    const url = keyedUrl(keys, row.url, former);
    if (url === null) {
      clear.push(row);
      continue;
    }
    if (url !== row.url) plan.renamed.push({ id: row.id, url });
    holder.set(url, row.id);
  }
  for (const row of clear) {
    const url = keys.webhook(row.url);
    const into = holder.get(url);
    if (into === undefined) {
      plan.renamed.push({ id: row.id, url });
      holder.set(url, row.id);
    } else {
      plan.merged.push({ from: row.id, into });
    }
  }
  if (former) {
    for (const from of digestMessageIds) {
      const match = DIGEST_ID.exec(from);
      if (match?.[1] && match[2]) {
        plan.messages.push({ from, to: `digest_${keys.notifyTarget(match[1])}_${match[2]}` });
      }
    }
  }
  return plan;
}

/** The row's key after re-keying; null for a URL held in clear. */
function keyedUrl(keys: EndpointKeys, url: string, former: boolean): string | null {
  if (url.startsWith(WEBHOOK_ENDPOINT_PREFIX)) {
    return former ? keys.webhookOfDigest(url.slice(WEBHOOK_ENDPOINT_PREFIX.length)) : url;
  }
  if (url.startsWith(NOTIFY_ENDPOINT_PREFIX)) {
    return former
      ? `${NOTIFY_ENDPOINT_PREFIX}${keys.notifyTarget(url.slice(NOTIFY_ENDPOINT_PREFIX.length))}`
      : url;
  }
  return null;
}
