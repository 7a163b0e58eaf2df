/** A request head read off the bytes Node's parser refused: what gunicorn would have parsed. */
export interface RawRequestHead {
  method: string;
  url: string;
  requestLine: string;
  /** Node's flat [name, value, ...] list. */
  rawHeaders: string[];
  /** Lower-cased names, repeated values joined with ', ' as Node does. */
  headers: Record<string, string>;
}

/** The head of `packet` (latin-1, CRLF lines), or null when it is not complete and well formed. */
export function parseRawHead(packet: Buffer): RawRequestHead | null {
  const text = packet.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [requestLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const bits = requestLine.split(' ');
  if (bits.length !== 3 || !/^HTTP\/\d\.\d$/.test(bits[2] ?? '')) return null;
  const rawHeaders: string[] = [];
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return null;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    rawHeaders.push(name, value);
    const key = name.toLowerCase();
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  }
  return { method: bits[0] ?? '', url: bits[1] ?? '', requestLine, rawHeaders, headers };
}
