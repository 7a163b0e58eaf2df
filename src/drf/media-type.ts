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

/** Django's `_parse_header_params`: split on `;` outside double quotes. */
function splitParams(line: string): string[] {
  const out: string[] = [];
  let s = `;${line}`;
  const quotesBefore = (text: string, end: number): number => {
    const head = text.slice(0, end);
    return (head.match(/"/g)?.length ?? 0) - (head.match(/\\"/g)?.length ?? 0);
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

// Codecs Python finds by these names; any other RFC 2231 charset is a LookupError (a 500).
const PY_CODECS: Record<string, 'utf-8' | 'latin1' | 'ascii'> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  utf_8: 'utf-8',
  u8: 'utf-8',
  'latin-1': 'latin1',
  latin1: 'latin1',
  'iso-8859-1': 'latin1',
  'iso8859-1': 'latin1',
  l1: 'latin1',
  ascii: 'ascii',
  'us-ascii': 'ascii',
};

function decodeRfc2231(value: string): string {
  const parts = value.split("'");
  if (parts.length !== 3) throw new DjangoServerError('RFC 2231 value without charset and language');
  const [charset = '', , encoded = ''] = parts;
  if (!encoded.includes('%')) return encoded;
  const codec = PY_CODECS[charset.toLowerCase().replaceAll('_', '-')];
  if (codec === undefined) throw new DjangoServerError(`unknown encoding: ${charset}`);
  const raw = encoded.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
  const bytes = Buffer.from(raw, 'latin1');
  if (codec === 'latin1') return raw;
  return new TextDecoder(codec === 'ascii' ? 'ascii' : 'utf-8', { ignoreBOM: true }).decode(bytes);
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
