import { isLosslessNumber, pyFloatRepr, pyNumberText, type LosslessNumber } from '../json/lossless.js';

/**
 * JSON text as DRF's JSONRenderer writes it: Python's `json.dumps(ensure_ascii=False,
 * allow_nan=True)` with compact separators, or `indent=N` with `(',', ': ')`, then U+2028/U+2029
 * escaped. Differences from JS `JSON.stringify` handled here:
 * - U+2028/U+2029 become `\u2028`/`\u2029` (JS writes them raw);
 * - floats follow Python's `repr` (`1e-07`, `1e+21`, `0.0001`), not JS's (`1e-7`, `1e21`);
 * - control characters other than \b\f\n\r\t are `\u00XX` in both, lowercase hex in both.
 * A lone surrogate would make DRF fail with a 500 (it encodes to UTF-8 strictly); this writes
 * `\udXXX` instead so the data stays servable.
 */

/** A parsed JSON value; a number whose text JSON.stringify would not give back is a `LosslessNumber`. */
export type JsonValue =
  null | boolean | number | LosslessNumber | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object (not an array, not a kept number). */
export function isJsonObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value);
}

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/* eslint-disable no-control-regex -- control characters are exactly what Python's encoder escapes */
const NEEDS_ESCAPE =
  /[\u0000-\u001f"\\\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/* eslint-enable no-control-regex */

export function pyJsonString(text: string): string {
  return `"${text.replace(NEEDS_ESCAPE, (ch) => ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/**
 * A JS number as Python prints it after `json.loads` of `JSON.stringify`'s text (which is what a
 * snapshot stores): JS writes integers below 1e21 as digits, which Python reads as an int; every
 * other number has a `.` or exponent, so Python reads a float and writes `float.__repr__`.
 */
export function pyNumber(value: number): string {
  // String() is exactly what JSON.stringify wrote: shortest digits padded with zeros.
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return Object.is(value, -0) ? '0' : String(value);
  return pyFloatRepr(value);
}

/**
 * `json.dumps` of a parsed JSON value; indent null means DRF's compact form. Iterative, with an
 * explicit stack: a stored entry nested thousands of levels deep must not overflow the call stack
 * of the server (the sync bounds depth, but rows stored before that bound existed remain).
 */
export function pyJsonDumps(value: JsonValue, indent: number | null = null): string {
  return new PyJsonWriter(indent).write(value);
}

interface Frame {
  /** Array items, or object entries. */
  items: readonly JsonValue[] | readonly [string, JsonValue][];
  isArray: boolean;
  next: number;
  level: number;
}

class PyJsonWriter {
  readonly #indent: number | null;
  readonly #out: string[] = [];

  constructor(indent: number | null) {
    this.#indent = indent;
  }

  write(root: JsonValue): string {
    const stack: Frame[] = [];
    this.#value(root, 0, stack);
    for (let frame = stack.at(-1); frame; frame = stack.at(-1)) {
      if (frame.next === frame.items.length) {
        stack.pop();
        this.#close(frame);
        continue;
      }
      const index = frame.next++;
      this.#out.push(index === 0 ? this.#newline(frame.level + 1) : `,${this.#newline(frame.level + 1)}`);
      const item = frame.items[index];
      if (frame.isArray) this.#value(item as JsonValue, frame.level + 1, stack);
      else {
        const [key, child] = item as [string, JsonValue];
        this.#out.push(pyJsonString(key), this.#indent === null ? ':' : ': ');
        this.#value(child, frame.level + 1, stack);
      }
    }
    return this.#out.join('');
  }

  /** Writes a scalar or an empty container; opens a frame for a non-empty one. */
  #value(value: JsonValue, level: number, stack: Frame[]): void {
    if (value === null) this.#out.push('null');
    else if (value === true) this.#out.push('true');
    else if (value === false) this.#out.push('false');
    else if (typeof value === 'number') this.#out.push(pyNumber(value));
    else if (typeof value === 'string') this.#out.push(pyJsonString(value));
    else if (isLosslessNumber(value)) this.#out.push(pyNumberText(value));
    else {
      const isArray = Array.isArray(value);
      const items = isArray ? value : Object.entries(value);
      if (items.length === 0) this.#out.push(isArray ? '[]' : '{}');
      else {
        this.#out.push(isArray ? '[' : '{');
        stack.push({ items, isArray, next: 0, level });
      }
    }
  }

  #close(frame: Frame): void {
    this.#out.push(this.#newline(frame.level), frame.isArray ? ']' : '}');
  }

  #newline(level: number): string {
    return this.#indent === null ? '' : `\n${' '.repeat(this.#indent * level)}`;
  }
}
