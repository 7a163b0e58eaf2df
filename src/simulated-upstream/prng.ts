/**
 * A small seeded PRNG (mulberry32). The simulated upstream must be reproducible: the same seed gives
 * the same listing, the same mutations and the same faults, so a failing test can be replayed.
 */
export class Rng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, max). */
  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[this.int(items.length)] as T;
  }

  /** Picks by weight; weights need not sum to 1. */
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = this.next() * total;
    for (const [value, weight] of choices) {
      roll -= weight;
      if (roll < 0) return value;
    }
    const last = choices[choices.length - 1];
    if (!last) throw new RangeError('weighted pick from an empty list');
    return last[0];
  }

  token(length: number, alphabet: string): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[this.int(alphabet.length)];
    return out;
  }

  /** Fisher–Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const a = items[i] as T;
      items[i] = items[j] as T;
      items[j] = a;
    }
    return items;
  }

  /** `k` distinct integers from [0, n), in draw order (Floyd's algorithm: O(k), not O(n)). */
  sample(n: number, k: number): number[] {
    const chosen = new Set<number>();
    const order: number[] = [];
    for (let j = n - k; j < n; j++) {
      const t = this.int(j + 1);
      const value = chosen.has(t) ? j : t;
      chosen.add(value);
      order.push(value);
    }
    return this.shuffle(order);
  }
}

/** Derives an independent stream from a seed and a label, so adding one consumer never shifts another. */
export function deriveSeed(seed: number, label: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h = Math.imul(h ^ label.charCodeAt(i), 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
  }
  return h >>> 0;
}
