import { resultsTail } from '../drf/list-page.js';
import { pyJsonDumps, type JsonValue } from '../drf/python-json.js';
import type { SimulatedData, SimulatedEntry } from './data.js';

/** DRF's compact JSON of rows that may be deliberately invalid (still JSON values). */
export function rowsTail(rows: readonly SimulatedEntry[]): Buffer {
  return resultsTail(rows.map((row) => pyJsonDumps(row as JsonValue)));
}

/**
 * Rendered `"results":[...]}` tails per page, dropped whenever the listing changes. Benchmarks crawl
 * 12,500 pages at a time, so a page answer must be a map lookup and a small head.
 */
export class PageCache {
  readonly #data: SimulatedData;
  readonly #pageSize: number;
  readonly #pages = new Map<number, Buffer>();
  #version: number;

  constructor(data: SimulatedData, pageSize: number) {
    this.#data = data;
    this.#pageSize = pageSize;
    this.#version = data.version;
  }

  rows(page: number): SimulatedEntry[] {
    const start = (page - 1) * this.#pageSize;
    return this.#data.slice(start, start + this.#pageSize);
  }

  tail(page: number): Buffer {
    if (this.#version !== this.#data.version) {
      this.#pages.clear();
      this.#version = this.#data.version;
    }
    let tail = this.#pages.get(page);
    if (tail === undefined) {
      tail = rowsTail(this.rows(page));
      this.#pages.set(page, tail);
    }
    return tail;
  }
}
