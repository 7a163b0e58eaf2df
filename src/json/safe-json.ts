import { isLosslessNumber, parseJson } from './lossless.js';

/**
 * JSON.stringify for parsed JSON values, without recursion. V8's JSON.stringify recurses and throws
 * past a few thousand levels; the diff stringifies stored bodies, and a row stored before entry
 * depth was bounded must not make every later sync fail.
 */

interface Frame {
  items: readonly unknown[] | readonly [string, unknown][];
  isArray: boolean;
  next: number;
}

function writeJson(root: unknown, sortKeys: boolean): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  const value = (v: unknown): void => {
    if (v === null || typeof v !== 'object') {
      // A primitive: JSON.stringify is exact and not recursive for it.
      out.push(JSON.stringify(v) ?? 'null');
      return;
    }
    // A number kept as the upstream wrote it goes back out as that text.
    if (isLosslessNumber(v)) {
      out.push(v.value);
      return;
    }
    const isArray = Array.isArray(v);
    let items: readonly unknown[] | [string, unknown][] = isArray
      ? (v as unknown[])
      : // As JSON.stringify: a key whose value is undefined is left out.
        Object.entries(v as Record<string, unknown>).filter(([, child]) => child !== undefined);
    if (!isArray && sortKeys) {
      items = (items as [string, unknown][]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    }
    out.push(isArray ? '[' : '{');
    stack.push({ items, isArray, next: 0 });
  };
  value(root);
  for (let frame = stack.at(-1); frame; frame = stack.at(-1)) {
    if (frame.next === frame.items.length) {
      stack.pop();
      out.push(frame.isArray ? ']' : '}');
      continue;
    }
    const index = frame.next++;
    if (index > 0) out.push(',');
    if (frame.isArray) value(frame.items[index]);
    else {
      const [key, child] = frame.items[index] as [string, unknown];
      out.push(JSON.stringify(key), ':');
      value(child);
    }
  }
  return out.join('');
}

/**
 * Compact JSON text of a parsed JSON value, exactly as JSON.stringify writes it, at any depth; a
 * kept number (`LosslessNumber`) is written as its text.
 */
export function stringifyJson(value: unknown): string {
  return writeJson(value, false);
}

/** The JSON text with object keys sorted at every depth: equal for the same data in any key order. */
export function canonicalJson(json: string): string {
  return writeJson(parseJson(json), true);
}

/** A parsed value's text with object keys sorted at every depth. */
export function canonicalValue(value: unknown): string {
  return writeJson(value, true);
}
