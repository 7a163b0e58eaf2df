/**
 * What a page may spend on data the upstream sizes (fields of an entry, changes of a run). Values
 * are clipped one by one already; their number is not, and thousands of extra fields made a page of
 * megabytes that held the event loop for seconds. Each item costs its bytes plus its markup; once one
 * does not fit, nothing after it does either, so the page is cut in one place.
 */
export class ByteBudget {
  #left: number;
  #refused = 0;

  constructor(bytes: number) {
    this.#left = bytes;
  }

  /** Spends `bytes` (plus a floor for the markup around an item) if they fit. */
  take(bytes: number): boolean {
    const cost = bytes + ITEM_MARKUP_BYTES;
    if (this.#refused > 0 || cost > this.#left) {
      this.#refused++;
      return false;
    }
    this.#left -= cost;
    return true;
  }

  /** How many items were refused. */
  get refused(): number {
    return this.#refused;
  }
}

/** What the markup of one item (a `<dt>`/`<dd>` pair, an `<li>` with a diff) costs at least. */
const ITEM_MARKUP_BYTES = 100;

/** The coworker page's budget for entries' fields and versions' changes together. */
export const PAGE_DATA_BYTES = 192 * 1024;

/** A value's size as its JSON text, without building a huge string twice. */
export function jsonBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    return 0;
  }
}
