/**
 * A page's `"results":[...]}` bytes are shared by every answer of that page (any query string,
 * scheme or host): caches count them once, with the snapshot that holds them, never per answer.
 * Marking them here lets a cache tell by identity, without walking (or building) every page.
 */
const sharedTails = new WeakSet<Buffer>();

/** `"results":[...]}` for entries already in DRF's compact JSON text, marked as a shared tail. */
export function resultsTail(entryTexts: readonly string[]): Buffer {
  const tail = Buffer.from(`"results":[${entryTexts.join(',')}]}`);
  sharedTails.add(tail);
  return tail;
}

export function isSharedTail(chunk: Buffer): boolean {
  return sharedTails.has(chunk);
}
