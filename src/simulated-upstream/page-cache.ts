import type { SimulatedData, SimulatedEntry } from './data.js';
import { drfJson } from './drf-render.js';

/**
 * Rendered `results` arrays per page, dropped whenever the listing changes. Benchmarks crawl 12,500
 * pages at a time, so a page answer must be a map lookup and a string concatenation.
 */
export class PageCache {
  readonly #data: SimulatedData;
  readonly #pageSize: number;
  readonly #pages = new Map<number, string>();
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

  resultsJson(page: number): string {
    if (this.#version !== this.#data.version) {
      this.#pages.clear();
      this.#version = this.#data.version;
    }
    let json = this.#pages.get(page);
    if (json === undefined) {
      json = drfJson(this.rows(page));
      this.#pages.set(page, json);
    }
    return json;
  }
}
