/**
 * Whether a JSON text is exactly what V8 writes for its value: `JSON.stringify(JSON.parse(text))
 * === text`, answered by one scan instead of the round trip (parsing and writing every stored value
 * again was a third of an export's formatting). The answer is sound, not complete: `true`
 * only when the round trip surely gives the text back; `false` also for texts it does not try to
 * judge (numbers with a fraction or exponent or past 15 characters, `\u` and `\/` escapes, keys
 * starting with a digit, nesting past MAX_DEPTH), which the caller checks the slow way.
 */
export function isCanonicalJson(text: string): boolean {
  // A lone surrogate would be encoded as U+FFFD below, which V8 writes as it is: V8 escapes it.
  if (!isWellFormed(text)) return false;
  const bytes = utf8Of(text);
  return canonicalEnd(bytes) === bytes.length;
}

/**
 * The scan over UTF-8: where the canonical JSON value at the start of `bytes` ends, or -1 when
 * something makes it other than V8 would write it. `bytes` must be valid UTF-8: V8 writes every
 * well-formed character but the few it escapes as it is, so the bytes of a multi-byte character
 * need no look.
 */
function canonicalEnd(bytes: Uint8Array): number {
  // Per open container: where the keys seen so far of an object are, null for an array.
  const open: (number[] | null)[] = [];
  const scan: Scan = { bytes, end: bytes.length, open };
  let i = 0;
  for (;;) {
    const depth = open.length;
    i = scanValue(scan, i);
    if (i < 0) return -1;
    if (open.length > depth) continue; // a container opened: its first value is next
    i = afterValue(scan, i);
    if (i < 0) return -1;
    if (open.length === 0) return i;
  }
}

interface Scan {
  bytes: Uint8Array;
  end: number;
  open: (number[] | null)[];
}

/** Deeper than this is left to the round trip, which answers it (V8's writer recurses). */
const MAX_DEPTH = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
/** V8 writes these characters as `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and only these so. */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/** The byte at `i`, or -1 past the end (so a value cut there never scans as whole). */
function at(scan: Scan, i: number): number {
  return i < scan.end ? (scan.bytes[i] as number) : -1;
}

/** Whether the ASCII `word` is at `i`, within the end. */
function wordAt(scan: Scan, i: number, word: string): boolean {
  if (i + word.length > scan.end) return false;
  for (let k = 0; k < word.length; k++) if (scan.bytes[i + k] !== word.charCodeAt(k)) return false;
  return true;
}

/**
 * Scans one value at `i`: the index after it, or -1 when not canonical. A container that is not
 * empty stays open (pushed on `open`): the index is then that of its first value.
 */
function scanValue(scan: Scan, i: number): number {
  const c = at(scan, i);
  if (c === 0x7b || c === 0x5b) {
    const { open } = scan;
    if (open.length >= MAX_DEPTH) return -1;
    const isObject = c === 0x7b;
    if (at(scan, i + 1) === (isObject ? 0x7d : 0x5d)) return i + 2;
    const keys = isObject ? [] : null;
    open.push(keys);
    return keys ? scanKey(scan, i + 1, keys) : i + 1;
  }
  if (c === QUOTE) return scanString(scan, i);
  if (c === 0x74) return wordAt(scan, i, 'true') ? i + 4 : -1;
  if (c === 0x66) return wordAt(scan, i, 'false') ? i + 5 : -1;
  if (c === 0x6e) return wordAt(scan, i, 'null') ? i + 4 : -1;
  return scanInteger(scan, i);
}

/** After a value: closes what it ends, or moves past a comma (and the next key): the next index. */
function afterValue(scan: Scan, i: number): number {
  const { open } = scan;
  for (;;) {
    const keys = open.at(-1);
    if (keys === undefined) return i;
    const c = at(scan, i);
    if (c === COMMA) return keys === null ? i + 1 : scanKey(scan, i + 1, keys);
    if (c !== (keys === null ? 0x5d : 0x7d)) return -1;
    open.pop();
    i++;
  }
}

/** A key and its colon: V8 lists integer-like keys first, so a key starting with a digit is not judged. */
function scanKey(scan: Scan, i: number, keys: number[]): number {
  if (at(scan, i) !== QUOTE) return -1;
  const first = at(scan, i + 1);
  if (first >= 0x30 && first <= 0x39) return -1;
  const end = scanString(scan, i);
  if (end < 0 || at(scan, end) !== COLON) return -1;
  // Escapes are written one way in canonical text, so equal keys are equal bytes.
  for (let k = 0; k < keys.length; k += 2) {
    if (sameBytes(scan.bytes, keys[k] as number, keys[k + 1] as number, i, end)) return -1; // parsing keeps the last
  }
  keys.push(i, end);
  return end + 1;
}

/** Whether `bytes[a, aEnd)` and `bytes[b, bEnd)` are the same bytes. */
function sameBytes(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let k = 0; k < aEnd - a; k++) if (bytes[a + k] !== bytes[b + k]) return false;
  return true;
}

/** A string at `i` (its opening quote): the index after its closing quote, or -1. */
function scanString(scan: Scan, i: number): number {
  const { bytes, end } = scan;
  for (i++; i < end; i++) {
    const c = bytes[i] as number;
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      if (!SHORT_ESCAPES.has(at(scan, ++i))) return -1;
    } else if (c < 0x20) {
      return -1; // V8 escapes control characters
    }
  }
  return -1;
}

/** An integer V8 writes digit for digit: no leading zero, not -0, at most 15 characters (exact). */
function scanInteger(scan: Scan, i: number): number {
  const start = i;
  if (at(scan, i) === 0x2d) i++;
  const first = at(scan, i);
  if (first === 0x30) {
    i++;
    if (i - start === 2) return -1; // -0 is written 0
  } else if (first >= 0x31 && first <= 0x39) {
    do i++;
    while (at(scan, i) >= 0x30 && at(scan, i) <= 0x39);
  } else {
    return -1;
  }
  const next = at(scan, i);
  if (next === 0x2e || next === 0x65 || next === 0x45 || i - start > 15) return -1;
  return i;
}

// `String.prototype.isWellFormed` (Node 20's V8 has it; TypeScript's ES2023 library does not).
const wellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/** Whether `text` has no lone surrogate. */
function isWellFormed(text: string): boolean {
  if (wellFormed) return wellFormed.call(text);
  return !/\p{Surrogate}/u.test(text);
}

/** One buffer the string scan encodes into, grown as needed: no allocation per value. */
let scratch = Buffer.allocUnsafe(4096);

/** `text` as UTF-8, in `scratch` (valid until the next call). */
function utf8Of(text: string): Buffer {
  // UTF-16 to UTF-8 takes at most 3 bytes per code unit.
  if (text.length * 3 > scratch.length) scratch = Buffer.allocUnsafe(text.length * 3);
  const written = scratch.write(text, 0, 'utf8');
  return scratch.subarray(0, written);
}
