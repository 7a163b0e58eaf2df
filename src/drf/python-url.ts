/**
 * The few pieces of Python's `urllib.parse` and Django's `utils.encoding` that decide the bytes of
 * DRF's `next`/`previous` links and a redirect's `Location`. Strings here hold one char per code
 * point as Python's `str` does; the request target arrives as latin-1 text (one char per byte), as
 * WSGI servers hand it to Django.
 */

const ALWAYS_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~';

interface SafeSet {
  table: boolean[];
  /** Matches any char that needs quoting: lets already-safe text through without a copy. */
  unsafe: RegExp;
}

const safeSets = new Map<string, SafeSet>();

function safeSet(extra: string): SafeSet {
  let set = safeSets.get(extra);
  if (set === undefined) {
    const table: boolean[] = new Array<boolean>(128).fill(false);
    for (const ch of ALWAYS_SAFE + extra) table[ch.charCodeAt(0)] = true;
    const escaped = (ALWAYS_SAFE + extra).replace(/[\\\]^-]/g, '\\$&');
    set = { table, unsafe: new RegExp(`[^${escaped}]`) };
    safeSets.set(extra, set);
  }
  return set;
}

const utf8 = new TextEncoder();

/** `urllib.parse.quote(text, safe)`: UTF-8 encode, then percent-escape every unsafe byte. */
export function pyQuote(text: string, safe: string): string {
  const { table, unsafe } = safeSet(safe);
  if (!unsafe.test(text)) return text;
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (code < 128 && table[code] === true) {
      out += ch;
      continue;
    }
    for (const byte of utf8.encode(ch)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `urllib.parse.quote_plus(text, safe='')`, used by `urlencode`. */
export function pyQuotePlus(text: string): string {
  return text.includes(' ') ? pyQuote(text, ' ').replaceAll(' ', '+') : pyQuote(text, '');
}

/** Django's `iri_to_uri`: `quote(iri, safe="/#%[]=:;$&()+,!?*@'~")`. */
export function iriToUri(iri: string): string {
  return pyQuote(iri, "/#%[]=:;$&()+,!?*@'~");
}

/** Django's `escape_uri_path`. */
export function escapeUriPath(path: string): string {
  return pyQuote(path, "/:@&+$,-_.!~*'()");
}

const HEX = /^[0-9A-Fa-f]{2}$/;

/** `urllib.parse.unquote_to_bytes` over a string of ASCII chars. */
function unquoteToBytes(ascii: string): number[] {
  const bytes: number[] = [];
  const parts = ascii.split('%');
  for (const ch of parts[0] ?? '') bytes.push(ch.charCodeAt(0));
  for (const part of parts.slice(1)) {
    const hex = part.slice(0, 2);
    if (HEX.test(hex)) {
      bytes.push(parseInt(hex, 16));
      for (const ch of part.slice(2)) bytes.push(ch.charCodeAt(0));
    } else {
      bytes.push(0x25);
      for (const ch of part) bytes.push(ch.charCodeAt(0));
    }
  }
  return bytes;
}

// Python's UTF-8 decoder with errors='replace' substitutes maximal invalid subparts, as
// TextDecoder does; ignoreBOM keeps a leading U+FEFF, which Python's 'utf-8' codec also keeps.
const replacingDecoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** `urllib.parse.unquote(text)` (UTF-8, errors='replace'): only ASCII runs are decoded. */
export function pyUnquote(text: string): string {
  if (!text.includes('%')) return text;
  // eslint-disable-next-line no-control-regex -- Python's _asciire is exactly [\x00-\x7f]+
  return text.replace(/[\x00-\x7f]+/g, (run) =>
    replacingDecoder.decode(Uint8Array.from(unquoteToBytes(run))),
  );
}

/** `urllib.parse.parse_qsl(qs, keep_blank_values=True)` with Python 3.11's `&`-only separator. */
export function pyParseQsl(query: string): [string, string][] {
  const pairs: [string, string][] = [];
  if (query === '') return pairs;
  for (const field of query.split('&')) {
    if (field === '') continue;
    const eq = field.indexOf('=');
    const name = eq < 0 ? field : field.slice(0, eq);
    const value = eq < 0 ? '' : field.slice(eq + 1);
    pairs.push([pyUnquote(name.replaceAll('+', ' ')), pyUnquote(value.replaceAll('+', ' '))]);
  }
  return pairs;
}

/** Orders strings by code point, as Python compares `str` (JS's `<` compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const left = Array.from(a);
  const right = Array.from(b);
  const n = Math.min(left.length, right.length);
  for (let i = 0; i < n; i += 1) {
    const diff = (left[i]?.codePointAt(0) ?? 0) - (right[i]?.codePointAt(0) ?? 0);
    if (diff !== 0) return diff;
  }
  return left.length - right.length;
}

/**
 * DRF's `replace_query_param` (value given) or `remove_query_param` (value null) applied to a query
 * string: `parse_qs` groups repeated keys, keys are sorted and re-encoded with `quote_plus`.
 */
export function rewriteQuery(query: string, key: string, value: string | null): string {
  const grouped = new Map<string, string[]>();
  for (const [name, val] of pyParseQsl(query)) {
    const list = grouped.get(name);
    if (list) list.push(val);
    else grouped.set(name, [val]);
  }
  if (value === null) grouped.delete(key);
  else grouped.set(key, [value]);
  const keys = [...grouped.keys()].sort(compareCodePoints);
  const parts: string[] = [];
  for (const name of keys) {
    const encodedName = pyQuotePlus(name);
    for (const val of grouped.get(name) ?? []) parts.push(`${encodedName}=${pyQuotePlus(val)}`);
  }
  return parts.join('&');
}

/** Request bytes (latin-1 text) decoded the way Django's QueryDict does: UTF-8, else latin-1. */
export function decodeQueryBytes(latin1: string): string {
  if (!/[\u0080-\uffff]/.test(latin1)) return latin1;
  if (/[\u0100-\uffff]/.test(latin1)) return latin1; // not bytes: already text
  try {
    return strictDecoder.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return latin1;
  }
}

/**
 * Django's `path_info` from the raw path: percent-decode to bytes (gunicorn), then decode UTF-8
 * with invalid sequences re-percent-encoded (`repercent_broken_unicode`).
 */
export function decodePathInfo(rawPath: string): string {
  if (!rawPath.includes('%') && !/[\u0080-\uffff]/.test(rawPath)) return rawPath;
  const bytes = Buffer.from(unquoteToBytes(rawPath.replace(/[\u0100-\uffff]/g, '?')));
  let out = '';
  let rest = bytes;
  for (;;) {
    try {
      return out + strictDecoder.decode(rest);
    } catch {
      const { validUpTo, invalidLength } = firstInvalidUtf8(rest);
      out += strictDecoder.decode(rest.subarray(0, validUpTo));
      for (const byte of rest.subarray(validUpTo, validUpTo + invalidLength)) {
        out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
      }
      rest = rest.subarray(validUpTo + invalidLength);
    }
  }
}

/** Where Python's strict UTF-8 decoder stops: the valid prefix and the invalid sequence's length. */
function firstInvalidUtf8(bytes: Buffer): { validUpTo: number; invalidLength: number } {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    let need = 0;
    let lo = 0x80;
    let hi = 0xbf;
    if (b < 0x80) {
      i += 1;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return { validUpTo: i, invalidLength: 1 };
    let j = 1;
    for (; j <= need; j += 1) {
      const c = bytes[i + j];
      const min = j === 1 ? lo : 0x80;
      const max = j === 1 ? hi : 0xbf;
      if (c === undefined || c < min || c > max) return { validUpTo: i, invalidLength: j };
    }
    i += need + 1;
  }
  return { validUpTo: bytes.length, invalidLength: 0 };
}
