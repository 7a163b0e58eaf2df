import { createHash } from 'node:crypto';

/**
 * Identity of an entry's exact text. The diff compares these instead of holding every stored body
 * in memory (100,000 bodies are ~60 MB of strings; their hashes are a tenth of that). The first 66
 * bits of its sha1, in 11 base64 characters (migration body_hash_66_bits cut the stored ones alike):
 * it only tells one appearance's old text from its new one, where two texts agree by chance once
 * in 2^66, and it is stored in every version (17 B per entry less than the whole digest, issue 21).
 */
export function bodyHash(json: string): string {
  return createHash('sha1').update(json).digest('base64').slice(0, 11);
}
