import { seededRandom } from '../http/drf/differential-requests.js';

/** Seeded choices for the fuzzer: the same seed gives the same requests on every run. */
export class Dice {
  readonly #random: () => number;

  constructor(seed: number) {
    this.#random = seededRandom(seed);
  }

  next(): number {
    return this.#random();
  }

  chance(p: number): boolean {
    return this.#random() < p;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.#random() * (max - min + 1));
  }

  pick<T>(list: readonly T[]): T {
    if (list.length === 0) throw new RangeError('pick from an empty list');
    return list[Math.floor(this.#random() * list.length)] as T;
  }

  /** One value, chosen with the given relative weights. */
  weighted<T>(entries: readonly (readonly [number, T])[]): T {
    const total = entries.reduce((sum, [w]) => sum + w, 0);
    let roll = this.#random() * total;
    for (const [weight, value] of entries) {
      roll -= weight;
      if (roll < 0) return value;
    }
    const last = entries.at(-1);
    if (last === undefined) throw new RangeError('weighted pick from an empty list');
    return last[1];
  }

  /** `length` chars drawn from `alphabet`. */
  text(alphabet: string, length: number): string {
    let out = '';
    for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(this.#random() * alphabet.length)] ?? '';
    return out;
  }

  shuffle<T>(list: T[]): T[] {
    for (let i = list.length - 1; i > 0; i -= 1) {
      const j = Math.floor(this.#random() * (i + 1));
      [list[i], list[j]] = [list[j] as T, list[i] as T];
    }
    return list;
  }
}
