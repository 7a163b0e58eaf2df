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

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

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
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  // String() is exactly what JSON.stringify wrote: shortest digits padded with zeros.
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return Object.is(value, -0) ? '0' : String(value);
  // toExponential() without digits gives the shortest round-tripping digits, as Python's repr.
  const [mantissa = '', exp = '0'] = value.toExponential().split('e');
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const exponent = Number(exp);
  const sign = negative ? '-' : '';
  if (exponent < -4 || exponent >= 16) {
    const frac = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exponent).toString().padStart(2, '0');
    return `${sign}${frac}e${exponent < 0 ? '-' : '+'}${e}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const intPart = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fracPart = digits.slice(exponent + 1) || '0';
  return `${sign}${intPart}.${fracPart}`;
}

/** `json.dumps` of a parsed JSON value; indent null means DRF's compact form. */
export function pyJsonDumps(value: JsonValue, indent: number | null = null): string {
  return dump(value, indent, 0);
}

function dump(value: JsonValue, indent: number | null, level: number): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'string') return pyJsonString(value);
  const isArray = Array.isArray(value);
  const items = isArray
    ? value.map((item) => dump(item, indent, level + 1))
    : Object.entries(value).map(
        ([k, v]) => `${pyJsonString(k)}${indent === null ? ':' : ': '}${dump(v, indent, level + 1)}`,
      );
  const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
  if (items.length === 0) return open + close;
  if (indent === null) return open + items.join(',') + close;
  const inner = `\n${' '.repeat(indent * (level + 1))}`;
  const outer = `\n${' '.repeat(indent * level)}`;
  return open + inner + items.join(`,${inner}`) + outer + close;
}
