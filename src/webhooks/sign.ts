import { Webhook } from 'standardwebhooks';

/** Signs one attempt: the `webhook-signature` header value for (id, timestamp, body). */
export type Signer = (webhookId: string, timestamp: Date, body: string) => string;

/**
 * Standard Webhooks signing (v1: HMAC-SHA256 of "id.timestamp.body" under the base64-decoded
 * `whsec_` secret), by the specification's reference library. Null without a secret: unsigned.
 */
export function createSigner(secret: string | null): Signer | null {
  if (secret === null) return null;
  const webhook = new Webhook(secret);
  return (webhookId, timestamp, body) => webhook.sign(webhookId, timestamp, body);
}
