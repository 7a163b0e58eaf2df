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
