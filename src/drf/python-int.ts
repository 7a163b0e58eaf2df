/**
 * Python's `int(str)` (base 10), which DRF's paginator applies to the `page` query value. Python is
 * far looser than `Number()`: surrounding Unicode whitespace, a sign, `_` between digits and any
 * Unicode decimal digit (Nd) are accepted, so `' +1_0 '` and `'٣'` are valid page numbers.
 */

// Python's str.isspace() set (bidi WS/B/S or Zs), which int() strips; it is not JS's `\s`:
// \x1c-\x1f and \x85 are in, \ufeff is out.
const PY_SPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002,
  0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

export function isPythonSpace(codePoint: number): boolean {
  return PY_SPACE.has(codePoint);
}

// int() maps non-ASCII spaces to ' ' but then skips only C's isspace(): \x1c-\x1f are not skipped.
function isIntSpace(codePoint: number): boolean {
  return PY_SPACE.has(codePoint) && !(codePoint >= 0x1c && codePoint <= 0x1f);
}

const DECIMAL = /^\p{Nd}$/u;

/**
 * The value 0-9 of a decimal digit of any script, or -1. Unicode keeps Nd digits in runs of ten
 * contiguous code points starting at zero, so the value is the distance from the run's start.
 */
export function decimalDigitValue(codePoint: number): number {
  if (codePoint >= 0x30 && codePoint <= 0x39) return codePoint - 0x30;
  if (codePoint < 0x80 || !DECIMAL.test(String.fromCodePoint(codePoint))) return -1;
  let start = codePoint;
  while (start > 0 && DECIMAL.test(String.fromCodePoint(start - 1))) start -= 1;
  return (codePoint - start) % 10;
}

// CPython refuses to convert more digits than this (sys.get_int_max_str_digits(), 3.11 default).
const MAX_STR_DIGITS = 4300;

/** `int(text)` as Python 3.11 evaluates it, or null where Python raises ValueError. */
export function parsePythonInt(text: string): bigint | null {
  if (/^[0-9]{1,15}$/.test(text)) return BigInt(text);
  const chars = Array.from(text, (ch) => ch.codePointAt(0) ?? 0);
  let start = 0;
  let end = chars.length;
  while (start < end && isIntSpace(chars[start] ?? 0)) start += 1;
  while (end > start && isIntSpace(chars[end - 1] ?? 0)) end -= 1;
  let negative = false;
  const sign = chars[start];
  if (sign === 0x2b || sign === 0x2d) {
    negative = sign === 0x2d;
    start += 1;
  }
  let digits = '';
  let previousWasDigit = false;
  for (let i = start; i < end; i += 1) {
    const cp = chars[i] ?? 0;
    if (cp === 0x5f) {
      // An underscore only between two digits.
      if (!previousWasDigit) return null;
      previousWasDigit = false;
      continue;
    }
    const value = decimalDigitValue(cp);
    if (value < 0) return null;
    digits += String(value);
    previousWasDigit = true;
  }
  if (digits === '' || !previousWasDigit) return null;
  if (digits.length > MAX_STR_DIGITS) return null;
  const magnitude = BigInt(digits);
  return negative ? -magnitude : magnitude;
}
