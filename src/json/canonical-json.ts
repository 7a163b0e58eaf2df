/**
 * Whether a JSON text is exactly what V8 writes for its value: `JSON.stringify(JSON.parse(text))
 * === text`, answered by one scan instead of the round trip (parsing and writing every stored value
 * again was a third of an export's formatting, issue 21). The answer is sound, not complete: `true`
 * only when the round trip surely gives the text back; `false` also for texts it does not try to
 * judge (numbers with a fraction or exponent or past 15 characters, `\u` and `\/` escapes, keys
 * starting with a digit, nesting past MAX_DEPTH), which the caller checks the slow way.
 */
export function isCanonicalJson(text: string): boolean {
  // Per open container: the keys seen so far of an object, null for an array.
  const open: (string[] | null)[] = [];
  let i = 0;
  for (;;) {
    const depth = open.length;
    i = scanValue(text, i, open);
    if (i < 0) return false;
    if (open.length > depth) continue; // a container opened: its first value is next
    i = afterValue(text, i, open);
    if (i < 0) return false;
    if (open.length === 0) return i === text.length;
  }
}

/** Deeper than this is left to the round trip, which answers it (V8's writer recurses). */
const MAX_DEPTH = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
/** V8 writes these characters as `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and only these so. */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/**
 * Scans one value at `i`: the index after it, or -1 when not canonical. A container that is not
 * empty stays open (pushed on `open`): the index is then that of its first value.
 */
function scanValue(text: string, i: number, open: (string[] | null)[]): number {
  const c = text.charCodeAt(i);
  if (c === 0x7b || c === 0x5b) {
    if (open.length >= MAX_DEPTH) return -1;
    const isObject = c === 0x7b;
    if (text.charCodeAt(i + 1) === (isObject ? 0x7d : 0x5d)) return i + 2;
    const keys = isObject ? [] : null;
    open.push(keys);
    return keys ? scanKey(text, i + 1, keys) : i + 1;
  }
  if (c === QUOTE) return scanString(text, i);
  if (c === 0x74) return text.startsWith('true', i) ? i + 4 : -1;
  if (c === 0x66) return text.startsWith('false', i) ? i + 5 : -1;
  if (c === 0x6e) return text.startsWith('null', i) ? i + 4 : -1;
  return scanInteger(text, i);
}

/** After a value: closes what it ends, or moves past a comma (and the next key): the next index. */
function afterValue(text: string, i: number, open: (string[] | null)[]): number {
  for (;;) {
    const keys = open.at(-1);
    if (keys === undefined) return i;
    const c = text.charCodeAt(i);
    if (c === COMMA) return keys === null ? i + 1 : scanKey(text, i + 1, keys);
    if (c !== (keys === null ? 0x5d : 0x7d)) return -1;
    open.pop();
    i++;
  }
}

/** A key and its colon: V8 lists integer-like keys first, so a key starting with a digit is not judged. */
function scanKey(text: string, i: number, keys: string[]): number {
  if (text.charCodeAt(i) !== QUOTE) return -1;
  const first = text.charCodeAt(i + 1);
  if (first >= 0x30 && first <= 0x39) return -1;
  const end = scanString(text, i);
  if (end < 0 || text.charCodeAt(end) !== COLON) return -1;
  // Escapes are written one way in canonical text, so equal keys are equal texts.
  const key = text.slice(i, end);
  if (keys.includes(key)) return -1; // a duplicate: parsing keeps only the last
  keys.push(key);
  return end + 1;
}

/** A string at `i` (its opening quote): the index after its closing quote, or -1. */
function scanString(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      if (!SHORT_ESCAPES.has(text.charCodeAt(++i))) return -1;
    } else if (c < 0x20) {
      return -1; // V8 escapes control characters
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // A pair is written as it is; a lone surrogate is escaped.
      const low = text.charCodeAt(i + 1);
      if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) return -1;
      i++;
    }
  }
  return -1;
}

/** An integer V8 writes digit for digit: no leading zero, not -0, at most 15 characters (exact). */
function scanInteger(text: string, i: number): number {
  const start = i;
  if (text.charCodeAt(i) === 0x2d) i++;
  const first = text.charCodeAt(i);
  if (first === 0x30) {
    i++;
    if (i - start === 2) return -1; // -0 is written 0
  } else if (first >= 0x31 && first <= 0x39) {
    do i++;
    while (text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39);
  } else {
    return -1;
  }
  const next = text.charCodeAt(i);
  if (next === 0x2e || next === 0x65 || next === 0x45 || i - start > 15) return -1;
  return i;
}
