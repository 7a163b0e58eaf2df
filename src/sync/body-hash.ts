import { hash } from 'node:crypto';

/**
 * Identity of an entry's exact text. The diff compares these instead of holding every stored body
 * in memory (a large listing's bodies are many megabytes of strings; their hashes a small part). The first 66
 * bits of its sha1, in 11 base64 characters (migration body_hash_66_bits cut the stored ones alike):
 * it only tells one appearance's old text from its new one, where two texts agree by chance once
 * in 2^66, and it is stored in every version (17 B per entry less than the whole digest).
 * The one-shot crypto.hash (Node ≥ 20.12; engines asks 20.19), not a Hash object per entry: the same
 * digest in half the time, a hash per entry of every sync.
 */
export function bodyHash(json: string): string {
  return hash('sha1', json, 'base64').slice(0, 11);
}
