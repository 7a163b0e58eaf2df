/**
 * DRF 3.14's media type handling under Django 3.2: `compat.parse_header_parameters` (Django's
 * multipart `parse_header` on the UTF-8 bytes of the header) and `utils.mediatypes._MediaType`.
 * Header values are latin-1 text, one char per byte, as WSGI and node both deliver them.
 */

/** Raised where Django/DRF would raise a non-HTTP exception: Django answers with its 500 page. */
export class DjangoServerError extends Error {
  override readonly name = 'DjangoServerError';
}

export interface ParsedHeader {
  key: string;
  params: Map<string, string>;
}

const BYTES_SPACE = /^[ \t\n\r\v\f]+|[ \t\n\r\v\f]+$/g;

function bytesStrip(text: string): string {
  return text.replace(BYTES_SPACE, '');
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (ch) => ch.toLowerCase());
}

/** `.decode('ascii')` of the UTF-8 bytes: any non-ASCII char is a UnicodeDecodeError. */
function requireAscii(text: string): string {
  // eslint-disable-next-line no-control-regex -- ASCII is exactly \x00-\x7f
  if (/[^\x00-\x7f]/.test(text)) throw new DjangoServerError('non-ASCII media type or parameter name');
  return text;
}

/**
 * Django 3.2's `_parse_header_params`: split on `;` outside double quotes, where "outside" means an
 * even count of `"` before it. 3.2 counts every `"`, a backslash-escaped one too (4.2 and the stdlib's
 * `cgi` subtract `\"`), so `x="a\"b;c"; indent=2` splits inside the quotes and `indent` is lost.
 */
function splitParams(line: string): string[] {
  const out: string[] = [];
  let s = `;${line}`;
  const quotesBefore = (text: string, end: number): number => {
    let count = 0;
    for (let i = text.indexOf('"'); i >= 0 && i < end; i = text.indexOf('"', i + 1)) count += 1;
    return count;
  };
  while (s.startsWith(';')) {
    s = s.slice(1);
    let end = s.indexOf(';');
    while (end > 0 && quotesBefore(s, end) % 2 === 1) end = s.indexOf(';', end + 1);
    if (end < 0) end = s.length;
    out.push(bytesStrip(s.slice(0, end)));
    s = s.slice(end);
  }
  return out;
}

type PyCodec = 'utf-8' | 'latin1' | 'ascii';

/**
 * The names Python's codec registry maps to the three codecs decoded here (`encodings.aliases`
 * plus the module names), after its normalisation. Any other charset is either unknown to Python
 * too (a LookupError: a 500), or one of its other codecs, answered with a 500 as well.
 */
const PY_CODECS = new Map<string, PyCodec>([
  ...['utf_8', 'utf8', 'u8', 'utf', 'utf8_ucs2', 'utf8_ucs4', 'cp65001'].map((n) => [n, 'utf-8'] as const),
  ...[
    ...['latin_1', 'latin1', 'latin', 'l1', '8859', 'cp819', 'csisolatin1', 'ibm819', 'iso8859'],
    ...['iso8859_1', 'iso_8859_1', 'iso_8859_1_1987', 'iso_ir_100'],
  ].map((n) => [n, 'latin1'] as const),
  ...[
    ...['ascii', 'us_ascii', 'us', '646', 'cp367', 'csascii', 'ibm367', 'iso646_us', 'iso_ir_6'],
    ...['ansi_x3.4_1968', 'ansi_x3_4_1968', 'ansi_x3.4_1986', 'iso_646.irv_1991'],
  ].map((n) => [n, 'ascii'] as const),
]);

// str.isalnum() past ASCII among the chars a header can hold (U+0080-U+00FF).
const LATIN1_ALNUM = /[\xaa\xb2\xb3\xb5\xb9\xba\xbc-\xbe\xc0-\xd6\xd8-\xf6\xf8-\xff]/;

/**
 * `codecs.lookup`'s name handling: ASCII lower case, then `encodings.normalize_encoding` (runs of
 * anything but alphanumerics and `.` become one `_` between kept chars; non-ASCII ones are
 * dropped), then the alias table, tried again with `.` as `_`.
 */
function pyCodec(charset: string): PyCodec | undefined {
  let name = '';
  let punct = false;
  for (const ch of asciiLower(charset)) {
    if (/[a-z0-9.]/.test(ch) || LATIN1_ALNUM.test(ch)) {
      if (punct && name !== '') name += '_';
      if (ch < '\x80') name += ch;
      punct = false;
    } else punct = true;
  }
  return PY_CODECS.get(name) ?? PY_CODECS.get(name.replaceAll('.', '_'));
}

function decodeRfc2231(value: string): string {
  const parts = value.split("'");
  if (parts.length !== 3) throw new DjangoServerError('RFC 2231 value without charset and language');
  const [charset = '', , encoded = ''] = parts;
  if (!encoded.includes('%')) return encoded;
  const codec = pyCodec(charset);
  if (codec === undefined) throw new DjangoServerError(`unknown encoding: ${charset}`);
  // urllib.parse.unquote: only runs of ASCII are unquoted, each run's bytes decoded on its own with
  // errors='replace'; any other character stays as it came.
  // eslint-disable-next-line no-control-regex -- ASCII is exactly \x00-\x7f
  return encoded.replace(/[\x00-\x7f]+/g, (run) => decodeBytes(unquoteToBytes(run), codec));
}

/** `unquote_to_bytes` of ASCII text, its bytes as latin-1 chars: a `%` without two hex digits stays. */
function unquoteToBytes(run: string): string {
  return run.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function decodeBytes(bytes: string, codec: PyCodec): string {
  if (codec === 'latin1') return bytes;
  // WHATWG's "ascii" label is windows-1252: Python's ascii replaces every byte past 0x7f.
  if (codec === 'ascii') return bytes.replace(/[\x80-\xff]/g, '\ufffd');
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(Buffer.from(bytes, 'latin1'));
}

/** `parse_header_parameters(line)` of DRF 3.14 on Django 3.2. */
export function parseHeaderParameters(line: string): ParsedHeader {
  // Python works on line.encode(): UTF-8 bytes. Strip/lower act on ASCII bytes only, so operating
  // on the chars is equivalent except for the ASCII checks made explicit below.
  const plist = splitParams(line);
  const key = requireAscii(asciiLower(plist.shift() ?? ''));
  const params = new Map<string, string>();
  for (const p of plist) {
    const i = p.indexOf('=');
    if (i < 0) continue;
    let name = requireAscii(asciiLower(bytesStrip(p.slice(0, i))));
    let hasEncoding = false;
    if (name.endsWith('*')) {
      name = name.slice(0, -1);
      hasEncoding = (p.match(/'/g)?.length ?? 0) === 2;
    }
    let value = bytesStrip(p.slice(i + 1));
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replaceAll('\\\\', '\\').replaceAll('\\"', '"');
    }
    if (hasEncoding) value = decodeRfc2231(value);
    params.set(name, value);
  }
  return { key, params };
}

/** DRF's `_MediaType`. */
export class MediaType {
  readonly mainType: string;
  readonly subType: string;
  readonly params: Map<string, string>;

  constructor(readonly orig: string) {
    const { key, params } = parseHeaderParameters(orig);
    const slash = key.indexOf('/');
    this.mainType = slash < 0 ? key : key.slice(0, slash);
    this.subType = slash < 0 ? '' : key.slice(slash + 1);
    this.params = params;
  }

  /** True if this (a renderer's type) satisfies `other` (a requested type). */
  match(other: MediaType): boolean {
    for (const [name, value] of this.params) {
      if (name !== 'q' && other.params.get(name) !== value) return false;
    }
    if (this.subType !== '*' && other.subType !== '*' && other.subType !== this.subType) return false;
    if (this.mainType !== '*' && other.mainType !== '*' && other.mainType !== this.mainType) return false;
    return true;
  }

  get precedence(): number {
    if (this.mainType === '*') return 0;
    if (this.subType === '*') return 1;
    if (this.params.size === 0 || (this.params.size === 1 && this.params.has('q'))) return 2;
    return 3;
  }
}
