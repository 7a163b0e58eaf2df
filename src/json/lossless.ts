import {
  isLosslessNumber,
  LosslessNumber,
  parse as parseLossless,
  type DuplicateKeyInfo,
  type ParseOptions,
} from 'lossless-json';

export { isLosslessNumber, LosslessNumber };

/**
 * Deeper than this, a text is not re-read by lossless-json (whose parser recurses): such a text is
 * refused by the entry depth bound anyway, and must not overflow the stack on its way there.
 */
const LOSSLESS_MAX_DEPTH = 1000;

/**
 * A number JSON.stringify writes back as the same text stays a plain number; any other
 * (`100.0`, `-0.0`, `1e+16`, `9007199254740993`) is kept as its text: that text is what the
 * upstream's own serializer (Python's) wrote, and what a Python client reads back.
 */
function parseNumber(text: string): number | LosslessNumber {
  const value = Number(text);
  return String(value) === text ? value : new LosslessNumber(text);
}

/**
 * Whether any number sits in `value` (but under the top-level key `skip`). Iterative, for any depth,
 * and it stops at the first number: most pages of the listing hold none.
 */
function hasNumber(value: unknown, skip: string | undefined): boolean {
  if (typeof value === 'number') return true;
  if (value === null || typeof value !== 'object') return false;
  const stack: object[] = [];
  const visit = (node: object, skipKey: string | undefined): boolean => {
    for (const key in node) {
      if (key === skipKey) continue;
      const child: unknown = (node as Record<string, unknown>)[key];
      if (typeof child === 'number') return true;
      if (child !== null && typeof child === 'object') stack.push(child);
    }
    return false;
  };
  if (visit(value, Array.isArray(value) ? undefined : skip)) return true;
  for (let node = stack.pop(); node !== undefined; node = stack.pop())
    if (visit(node, undefined)) return true;
  return false;
}

/** How deep arrays and objects nest in `value`, iteratively (asked only of texts with a number). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, level] = item;
    if (node === null || typeof node !== 'object') continue;
    if (level > deepest) deepest = level;
    for (const child of Object.values(node)) stack.push([child, level + 1]);
  }
  return deepest;
}

/**
 * A key written twice in one object keeps its last value, at the key's first place: so Python's
 * json module (the upstream's, DRF's) reads it, and JSON.parse. lossless-json takes the last of two
 * equal values by itself but throws on two different ones unless told; reading such a text with
 * JSON.parse instead would lose the digits of every number beside the duplicate.
 */
const keepLast = ({ newValue }: DuplicateKeyInfo): unknown => newValue;

const LOSSLESS_OPTIONS: ParseOptions = { parseNumber, onDuplicateKey: keepLast };

/**
 * JSON.parse that keeps every number's text: a number JSON.stringify would not write back as it
 * was received comes back as a `LosslessNumber`. Most texts hold no number at all (the contract's
 * fields are strings, booleans and lists), so they pay only for the native parse and one walk.
 * `skipTopLevel` names a top-level key whose numbers need no text (a page's `count`, read as a
 * number): a page whose only number it is pays for no second parse. A key written twice keeps its
 * last value, as Python reads it, with every number of the text still kept.
 */
export function parseJson(text: string, skipTopLevel?: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!hasNumber(value, skipTopLevel) || depthOf(value) > LOSSLESS_MAX_DEPTH) return value;
  return parseLossless(text, null, LOSSLESS_OPTIONS);
}

/** A kept number's text as Python's json module writes the value it reads from it. */
export function pyNumberText(number: LosslessNumber): string {
  const text = number.value;
  // Python reads a JSON number without fraction or exponent as an int, of any size.
  if (/^-?\d+$/.test(text)) return BigInt(text).toString();
  return pyFloatRepr(Number(text));
}

/** `float.__repr__`: shortest round-tripping digits, `1e+16` past 16 digits, `.0` when integral. */
export function pyFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
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
