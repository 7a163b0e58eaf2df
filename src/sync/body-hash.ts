import { createHash } from 'node:crypto';

/**
 * Identity of an entry's exact text. The diff compares these instead of holding every stored body
 * in memory (100,000 bodies are ~60 MB of strings; their hashes are a tenth of that).
 */
export function bodyHash(json: string): string {
  return createHash('sha1').update(json).digest('base64');
}
